import { Inject, Injectable } from '@nestjs/common';
import { generateKsuid } from '@tributary/auth';
import { ConfigApiError } from '@tributary/config-api-access';
import { ConfigCommandHandler } from '@tributary/config-commands';
import {
  catalogSlugOf,
  FUNCTION_ID_PREFIXES,
  functionAggregate,
  FunctionDraft,
  FunctionKind,
  FunctionLimits,
  WorkspaceRecord,
} from '@tributary/config-domain';
import { ConfigReadModel, FunctionView } from '@tributary/config-projections';
import type { EventMetadata } from '@tributary/event-store';
import { FUNCTION_RUNNER, type FunctionRunner } from '@tributary/functions';

export const FUNCTION_LIMITS = Symbol('FunctionLimits');

/**
 * The function use cases of both APIs (the Config API v1beta and the Public API), apart from HTTP:
 * code is compiled in the sandbox (`FunctionRunner.check`: syntax with line and column, no
 * `import`/`export`, the kind's entry point) before anything is stored; the rest of the rules are the
 * aggregate's. Each write ends in one command and waits for the read model, which it answers from.
 * Refusals are `DomainError`s or `ConfigApiError`s, which each API words its own way.
 */
@Injectable()
export class FunctionCommands {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
    @Inject(FUNCTION_RUNNER) private readonly runner: FunctionRunner,
    @Inject(FUNCTION_LIMITS) private readonly limits: FunctionLimits,
  ) {}

  async create(
    workspace: WorkspaceRecord,
    kind: FunctionKind,
    draft: FunctionDraft,
    metadata: EventMetadata,
  ): Promise<FunctionView> {
    // The cap first: a workspace at its cap does not get its code compiled.
    const functionsInWorkspace = this.readModel.listFunctions(workspace.slug).length;
    if (functionsInWorkspace < this.limits.maxFunctions) await this.assertCompiles(kind, draft.code);
    const functionId = `${FUNCTION_ID_PREFIXES[kind]}${generateKsuid(new Date(metadata.time))}`;
    await this.commands.handle(
      functionAggregate,
      { workspaceSlug: workspace.slug, functionId },
      {
        type: 'CreateFunction',
        workspaceSlug: workspace.slug,
        workspaceId: workspace.id,
        functionId,
        kind,
        draft,
        workspaceExists: Boolean(this.readModel.workspace(workspace.slug)),
        functionsInWorkspace,
        limits: this.limits,
        now: metadata.time,
        actor: metadata.actor,
      },
      metadata,
    );
    return this.readModel.function(workspace.slug, functionId)!;
  }

  get(workspaceSlug: string, functionId: string): FunctionView | undefined {
    return this.readModel.function(workspaceSlug, functionId);
  }

  /** Oldest first. */
  list(workspaceSlug: string, kind?: FunctionKind): FunctionView[] {
    return this.readModel.listFunctions(workspaceSlug, kind);
  }

  /** Writes the fields given; code or settings make a new version, which runs once deployed. */
  async update(
    view: FunctionView,
    changes: Partial<FunctionDraft>,
    metadata: EventMetadata,
  ): Promise<FunctionView> {
    if (changes.code !== undefined) await this.assertCompiles(view.function.type, changes.code);
    return this.handle(
      view,
      { type: 'UpdateFunction', changes, limits: this.limits, now: metadata.time, actor: metadata.actor },
      metadata,
    );
  }

  /** A new version with version `version`'s code and settings. */
  async restore(view: FunctionView, version: number, metadata: EventMetadata): Promise<FunctionView> {
    return this.handle(
      view,
      { type: 'RestoreFunctionVersion', version, now: metadata.time, actor: metadata.actor },
      metadata,
    );
  }

  /**
   * Instances run the latest version from now on. Its code is compiled again: the sandbox that runs
   * it may be newer than the one that checked it when it was saved.
   */
  async deploy(view: FunctionView, metadata: EventMetadata): Promise<FunctionView> {
    const check = await this.runner.check(view.function.type, view.function.code);
    return this.handle(
      view,
      {
        type: 'DeployFunction',
        codeCompiles: check.ok ? { ok: true } : { ok: false, message: check.message },
        now: metadata.time,
      },
      metadata,
    );
  }

  /** Refused (`failed_precondition`) while an instance uses the function. */
  async delete(view: FunctionView, metadata: EventMetadata): Promise<void> {
    const { workspaceSlug, functionId } = view.function;
    await this.commands.handle(
      functionAggregate,
      { workspaceSlug, functionId },
      { type: 'DeleteFunction', instances: this.instancesOf(view) },
      metadata,
    );
  }

  /**
   * How many instances use the function: destinations of its workspace that are instances of it
   * (their catalog entry is the function id), destinations whose insert function it is, and sources
   * it runs for.
   */
  instancesOf(view: FunctionView): number {
    const { workspaceSlug, functionId } = view.function;
    const sources = this.readModel.listSources(workspaceSlug);
    let instances = 0;
    for (const { source } of sources) {
      if (source.functionId === functionId) instances += 1;
      for (const { destination } of this.readModel.listDestinations(source.sourceId)) {
        if (catalogSlugOf(destination) === functionId) instances += 1;
        if (destination.insertFunction?.functionId === functionId) instances += 1;
      }
    }
    return instances;
  }

  private async handle(
    view: FunctionView,
    command: Parameters<typeof functionAggregate.decider.decide>[1],
    metadata: EventMetadata,
  ): Promise<FunctionView> {
    const { workspaceSlug, functionId } = view.function;
    await this.commands.handle(functionAggregate, { workspaceSlug, functionId }, command, metadata);
    const updated = this.readModel.function(workspaceSlug, functionId);
    if (!updated) throw ConfigApiError.notFound('function not found');
    return updated;
  }

  /**
   * Code too large is refused before the sandbox sees it; then the sandbox compiles it (nothing of
   * it runs) and says what is wrong: a syntax error with its line and column, a module statement, a
   * missing entry point.
   */
  private async assertCompiles(kind: FunctionKind, code: string): Promise<void> {
    if (typeof code !== 'string' || !code.trim()) throw ConfigApiError.invalidArgument('code is required');
    const bytes = Buffer.byteLength(code, 'utf8');
    if (bytes > this.limits.maxCodeBytes) {
      throw ConfigApiError.invalidArgument(
        `code: ${bytes} bytes; a function's code may have at most ${this.limits.maxCodeBytes} (FUNCTION_MAX_CODE_BYTES)`,
      );
    }
    const check = await this.runner.check(kind, code);
    if (!check.ok) throw ConfigApiError.invalidArgument(`code: ${check.message}`);
  }
}
