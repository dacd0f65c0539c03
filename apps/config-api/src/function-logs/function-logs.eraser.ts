import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { ConfigReadModel } from '@tributary/config-projections';
import { FUNCTION_LOG_STORE, type FunctionLogStore } from '@tributary/event-log';

/**
 * Erases a function's logs when the function is deleted: the hook of the delete command, run when
 * the read model folds its `function-deleted` change, so every way of deleting a function (v1beta,
 * the Public API) erases them. Every Config API replica hears the change and erases: erasing twice
 * erases nothing more. A failure (the store unreachable) is logged and the logs are left to expire
 * within their 24 h, as they would be if the process stopped before it erased them.
 */
@Injectable()
export class FunctionLogsEraser implements OnModuleDestroy {
  private readonly logger = new Logger('FunctionLogs');
  private readonly stopListening: () => void;
  private readonly erasing = new Set<Promise<void>>();

  constructor(
    readModel: ConfigReadModel,
    @Inject(FUNCTION_LOG_STORE) private readonly logs: FunctionLogStore,
  ) {
    this.stopListening = readModel.onChange((change) => {
      if (change.kind !== 'function-deleted') return;
      const { workspaceId, functionId } = change.function;
      const erased: Promise<void> = this.logs
        .eraseFunctionLogs(workspaceId, functionId)
        .catch((error: unknown) =>
          this.logger.warn(
            `the logs of deleted function ${functionId} were not erased (they expire within 24 h): ${String(error)}`,
          ),
        )
        .finally(() => this.erasing.delete(erased));
      this.erasing.add(erased);
    });
  }

  /** Resolves once the erasures under way have ended (for a test, or a shutdown that waits). */
  async settled(): Promise<void> {
    await Promise.all([...this.erasing]);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopListening();
    await this.settled();
  }
}
