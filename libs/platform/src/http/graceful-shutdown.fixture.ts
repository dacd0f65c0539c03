// Run as a child process by graceful-shutdown.spec.ts: an "application" whose close() takes
// `CLOSE_MS` milliseconds (or never ends when it is `never`), stopped by a signal.
import type { INestApplication } from '@nestjs/common';
import { stopGracefullyOnSignals } from './graceful-shutdown';

const closeMs = process.env['CLOSE_MS'] ?? '0';
const app = {
  close: () =>
    closeMs === 'fail'
      ? Promise.reject(new Error('the store would not close'))
      : new Promise<void>((resolve) => {
          if (closeMs !== 'never') setTimeout(resolve, Number(closeMs));
        }),
} as unknown as INestApplication;
stopGracefullyOnSignals(app, { name: 'fixture', limitMs: Number(process.env['LIMIT_MS'] ?? '10000') });
// Keeps the process alive until the signal, as a listening server would.
setInterval(() => undefined, 1000);
console.log('ready');
