import 'reflect-metadata';
import { loadEnvironment, runEntryPoint, serveUntilSignalled } from '@tributary/platform';
import { createTributaryApplication } from './tributary.application';

async function main(): Promise<void> {
  const environment = loadEnvironment();
  const app = await createTributaryApplication(environment);
  // HTTP first, then the router, then the log and the store; exit 0 within 10 s (see its doc).
  await serveUntilSignalled(app, environment, 'tributary', ` (data in ${environment.DATA_DIR})`);
}

runEntryPoint(main);
