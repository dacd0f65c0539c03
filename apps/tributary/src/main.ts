import 'reflect-metadata';
import { loadEnvironment, stopGracefullyOnSignals } from '@tributary/platform';
import { createTributaryApplication } from './tributary.application';

async function main(): Promise<void> {
  const environment = loadEnvironment();
  const app = await createTributaryApplication(environment);
  // HTTP first, then the router, then the log and the store; exit 0 within 10 s (see its doc).
  stopGracefullyOnSignals(app, { name: 'tributary' });
  await app.listen(environment.PORT, environment.HOST);
  console.log(`tributary listening on ${await app.getUrl()} (data in ${environment.DATA_DIR})`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
