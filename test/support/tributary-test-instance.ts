import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { generateAccessTokenSecret } from '@tributary/auth';
import { loadEnvironment, metricsUrlOf } from '@tributary/platform';
import type { DestinationStream } from 'pino';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTributaryApplication } from '../../apps/tributary/src/tributary.application';

export interface TributaryTestInstance {
  baseUrl: string;
  port: number;
  /** `GET` it for Prometheus metrics: the separate metrics listener (a free loopback port). */
  metricsUrl: string;
  /** An instance-admin Config API token. */
  adminToken: string;
  dataDir: string;
  app: NestFastifyApplication;
  /** Stops the server; the data directory stays for a restart unless `removeData` is set. */
  stop(options?: { removeData?: boolean }): Promise<void>;
}

export interface StartOptions {
  /** Reuse a data directory: a restart of an earlier instance. */
  dataDir?: string;
  adminToken?: string;
  environment?: Record<string, string>;
  /** Where the JSON log lines go instead of standard output (a test reading them back). */
  logDestination?: DestinationStream;
}

/** Starts the all-in-one server in this process on a free loopback port with its own data directory. */
export async function startTributary(options: StartOptions = {}): Promise<TributaryTestInstance> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tributary-test-'));
  const adminToken = options.adminToken ?? generateAccessTokenSecret();
  const environment = loadEnvironment({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    TRIBUTARY_BOOTSTRAP_TOKEN: adminToken,
    LOG_LEVEL: 'error',
    // A free port each: instances of parallel tests must not fight over 9464.
    METRICS_PORT: '0',
    // Tests deliver to fake vendors and webhooks on loopback, which the default (`public`) refuses;
    // a test of the policy itself passes its own.
    TRIBUTARY_EGRESS: 'open',
    ...options.environment,
  });
  const app = await createTributaryApplication(environment, { logDestination: options.logDestination });
  try {
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    // A start that fails (a taken metrics port) must not leave its stores open.
    await app.close().catch(() => undefined);
    throw error;
  }
  const port = (app.getHttpServer().address() as { port: number }).port;
  const metricsUrl = metricsUrlOf(app);
  if (!metricsUrl) throw new Error('the test instance has no metrics listener');
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    metricsUrl,
    adminToken,
    dataDir,
    app,
    async stop({ removeData = false } = {}) {
      await app.close();
      if (removeData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
