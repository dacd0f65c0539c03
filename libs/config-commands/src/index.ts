export * from './config-command-handler';
export * from './conflict-retry';
export * from './projection-waiter.port';
export * from './config-commands.module';
