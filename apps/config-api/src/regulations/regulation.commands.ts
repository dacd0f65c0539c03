import { Injectable } from '@nestjs/common';
import { generateKsuid } from '@tributary/auth';
import {
  checkRegulationRequest,
  REGULATION_TYPE_RULES,
  regulationAggregate,
  RegulationRequest,
  RegulationStatus,
  RegulationStreamStatus,
  RegulationType,
} from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel, RegulationView, SourceView } from '@tributary/config-projections';
import type { EventMetadata } from '@tributary/event-store';

export interface CreateRegulationInput extends RegulationRequest {
  workspaceSlug: string;
  /** The source a source-scoped regulation names (already resolved); absent for the whole workspace. */
  source?: SourceView;
  /** The Config API takes its own spellings of types beside the Public names; the Public API does not. */
  acceptAliases: boolean;
}

export interface RegulationFilter {
  /** Only the regulations scoped to this source. */
  sourceId?: string;
  statuses?: readonly RegulationStatus[];
  regulationTypes?: readonly RegulationType[];
}

export interface SuppressedUser {
  subjectType: 'USER_ID';
  subjectId: string;
  /** The source it is suppressed for; undefined for the whole workspace. */
  source?: SourceView;
}

/**
 * The regulation use cases, apart from HTTP, for both APIs that serve them (the Config API v1beta and
 * the Public API): create, read, list, cancel, and who is suppressed. Each write ends in one command
 * of the regulation's aggregate, and waits until the read model holds it: a suppression is in force
 * on this process when its create answers (docs/regulations.md §3). Refusals are `DomainError`s;
 * a field's refusal is a `RegulationRequestError` naming it, which each API words its own way.
 */
@Injectable()
export class RegulationCommands {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
  ) {}

  async create(input: CreateRegulationInput, metadata: EventMetadata): Promise<RegulationView> {
    const { workspaceSlug, source } = input;
    const checked = checkRegulationRequest(input, source ? 'source' : 'workspace', {
      acceptAliases: input.acceptAliases,
    });
    const regulationId = generateKsuid(new Date(metadata.time));
    const suppressions = this.readModel.suppressions(workspaceSlug);
    await this.commands.handle(
      regulationAggregate,
      { workspaceSlug, regulationId },
      {
        type: 'CreateRegulation',
        workspaceExists: Boolean(this.readModel.workspace(workspaceSlug)),
        regulation: {
          workspaceSlug,
          regulationId,
          ...checked,
          source: source
            ? {
                sourceId: source.source.sourceId,
                sourceSlug: source.source.sourceSlug,
                displayName: source.source.displayName,
              }
            : null,
          createTime: metadata.time,
        },
        suppressedAtWorkspaceScope:
          source && REGULATION_TYPE_RULES[checked.regulationType].unsuppresses && suppressions
            ? checked.subjectIds.filter((subjectId) => suppressions.workspaceWide.has(subjectId))
            : [],
        streams: this.streamsInScope(workspaceSlug, source),
      },
      metadata,
    );
    return this.readModel.regulation(workspaceSlug, regulationId)!;
  }

  get(workspaceSlug: string, regulationId: string): RegulationView | undefined {
    return this.readModel.regulation(workspaceSlug, regulationId);
  }

  /** Oldest first, as both APIs list them. */
  list(workspaceSlug: string, filter: RegulationFilter = {}): RegulationView[] {
    const statuses = filter.statuses?.length ? new Set(filter.statuses) : undefined;
    const types = filter.regulationTypes?.length ? new Set(filter.regulationTypes) : undefined;
    return this.readModel
      .listRegulations(workspaceSlug)
      .filter(
        ({ regulation, progress }) =>
          (filter.sourceId === undefined || regulation.source?.sourceId === filter.sourceId) &&
          (!statuses || statuses.has(progress.status)) &&
          (!types || types.has(regulation.regulationType)),
      );
  }

  /** Cancels a regulation no work began on; a `failed_precondition` refusal otherwise. */
  async cancel(view: RegulationView, metadata: EventMetadata): Promise<void> {
    const { workspaceSlug, regulationId } = view.regulation;
    await this.commands.handle(
      regulationAggregate,
      { workspaceSlug, regulationId },
      { type: 'DeleteRegulation' },
      metadata,
    );
  }

  /** Every suppressed user of the workspace, workspace-wide ones first, then by source. */
  suppressedUsers(workspaceSlug: string): SuppressedUser[] {
    const suppressions = this.readModel.suppressions(workspaceSlug);
    if (!suppressions) return [];
    const sources = new Map(
      this.readModel.listSources(workspaceSlug).map((view) => [view.source.sourceId, view]),
    );
    const users: SuppressedUser[] = [...suppressions.workspaceWide.keys()].map((subjectId) => ({
      subjectType: 'USER_ID',
      subjectId,
    }));
    for (const [sourceId, subjects] of suppressions.bySource) {
      const source = sources.get(sourceId);
      // A deleted source's suppressions suppress nothing any more.
      if (!source) continue;
      for (const subjectId of subjects.keys()) users.push({ subjectType: 'USER_ID', subjectId, source });
    }
    return users;
  }

  /** The destinations of every source in scope, as a regulation lists them before any work. */
  private streamsInScope(workspaceSlug: string, source: SourceView | undefined): RegulationStreamStatus[] {
    const sources = source ? [source] : this.readModel.listSources(workspaceSlug);
    return sources.map(({ source: { sourceId, sourceSlug } }) => ({
      sourceId,
      sourceSlug,
      destinations: this.readModel.listDestinations(sourceId).map(({ destination }) => ({
        destinationSlug: destination.destinationSlug,
        displayName: destination.displayName,
        status: 'RUNNING' as const,
        errString: '',
        finishTime: null,
      })),
    }));
  }
}
