import { Injectable } from '@nestjs/common';
import { ConfigApiError } from '@tributary/config-api-access';
import {
  catalogSlugOf,
  deployedFunctionVersion,
  type DestinationRecord,
  type FunctionKind,
} from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { catalogSlugFromName } from '@tributary/contracts';
import {
  type CatalogDestinationDefinition,
  findCatalogDestination,
  functionCatalogEntry,
  isFunctionId,
  notInCatalogReason,
} from '@tributary/destinations';

/**
 * The slug a `catalog/sources/<slug>` or `catalog/destinations/<slug>` names, a function id included
 * (`catalog/sources/sfn_…`); any other text as it is, for the caller's own refusal to name.
 */
export function catalogSlugOfName(name: string, kind: 'sources' | 'destinations'): string {
  const slug = catalogSlugFromName(name, kind);
  if (slug !== undefined) return slug;
  const prefix = `catalog/${kind}/`;
  const rest = name.startsWith(prefix) ? name.slice(prefix.length) : undefined;
  return rest !== undefined && isFunctionId(rest) ? rest : name;
}

/** Further instances of one entry on a source are named `{slug}-{n}` (n = 2, 3, ...). */
const FURTHER_INSTANCE = /^(.+)-([2-9]|[1-9][0-9]{1,5})$/;

/**
 * The entries destinations are instances of: the built-in catalog, and each workspace's own
 * `DESTINATION` functions (docs/functions.md §1 "Instances"), which only that workspace can name. A
 * function entry carries the settings of the function's deployed version: the version its instances
 * run. Insert functions and source functions are read the same way, as entries of their kind.
 */
@Injectable()
export class DestinationCatalog {
  constructor(private readonly readModel: ConfigReadModel) {}

  /** The entry a destination is an instance of, or undefined when it is gone (a retired entry). */
  entryOf(destination: Pick<DestinationRecord, 'workspaceSlug' | 'catalogSlug' | 'destinationSlug'>) {
    return this.find(destination.workspaceSlug, catalogSlugOf(destination));
  }

  /** `entryOf`, or a 400 (code 3) naming why there is none. */
  requireEntryOf(
    destination: Pick<DestinationRecord, 'workspaceSlug' | 'catalogSlug' | 'destinationSlug'>,
  ): CatalogDestinationDefinition {
    return this.require(destination.workspaceSlug, catalogSlugOf(destination));
  }

  find(workspaceSlug: string, slug: string): CatalogDestinationDefinition | undefined {
    return isFunctionId(slug)
      ? this.functionEntry(workspaceSlug, slug, 'DESTINATION')
      : findCatalogDestination(slug);
  }

  /**
   * The entry a new destination's slug names: the slug itself, or for `{slug}-{n}` the entry `slug`
   * (cross-spec-decisions.md §1). A 400 (code 3) when neither names an entry of the workspace.
   */
  require(workspaceSlug: string, slug: string): CatalogDestinationDefinition {
    const entry = this.find(workspaceSlug, slug);
    if (entry) return entry;
    const further = FURTHER_INSTANCE.exec(slug);
    const base = further ? this.find(workspaceSlug, further[1]) : undefined;
    if (base) return base;
    throw ConfigApiError.invalidArgument(
      isFunctionId(slug)
        ? `destination: "${slug}" is not a destination function of workspaces/${workspaceSlug} ` +
            '(see GET /v1beta/workspaces/{workspace}/functions?type=DESTINATION)'
        : `destination: ${notInCatalogReason(slug)}`,
    );
  }

  /** A function of the workspace of `kind`, as a catalog entry; undefined for any other id. */
  functionEntry(
    workspaceSlug: string,
    functionId: string,
    kind: FunctionKind,
  ): CatalogDestinationDefinition | undefined {
    const view = this.readModel.function(workspaceSlug, functionId);
    if (!view || view.function.type !== kind) return undefined;
    return functionCatalogEntry({
      ...view.function,
      settings: deployedFunctionVersion(view.function).settings,
    });
  }

  /** `functionEntry`, or a 400 (code 3) saying which kind of function of the workspace `field` must name. */
  requireFunctionEntry(
    workspaceSlug: string,
    functionId: string,
    kind: FunctionKind,
    field: string,
  ): CatalogDestinationDefinition {
    const entry = this.functionEntry(workspaceSlug, functionId, kind);
    if (!entry) {
      throw ConfigApiError.invalidArgument(
        `${field}: "${functionId}" is not ${kind === 'INSERT_DESTINATION' ? 'an' : 'a'} ${kind} function ` +
          `of workspaces/${workspaceSlug}`,
      );
    }
    return entry;
  }
}
