/**
 * The production topology in miniature, for the specs of this folder: a real nats-server, one data
 * directory whose SQLite event store the standalone apps share (each process sees the others' appends
 * by polling the file), and the apps as separate processes started with one environment (the routers
 * decrypt the webhook secrets the Config API encrypted, with the one secret key).
 */
import { NatsServerProcess } from '@tributary/event-log/testing';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { POLLING_ENVIRONMENT } from '../../apps/router/test/router-e2e.kit';
import type { ApiEndpoint } from '../support/tracking-e2e.kit';
import { spawnTributaryApp, type TributaryProcess } from '../support/tributary-process';

export class StandaloneTopology {
  /** Every app started, for `dispose`. */
  readonly processes: TributaryProcess[] = [];
  private adminTokenOfConfigApi: string | undefined;

  private constructor(
    /** Absent when the apps share the embedded SQLite log. */
    readonly nats: NatsServerProcess | undefined,
    readonly dataDir: string,
    readonly environment: Readonly<Record<string, string>>,
  ) {}

  /**
   * nats-server and the data directory; `settings` are added to every app's environment. With
   * `eventLog: 'sqlite'` no nats-server runs: the apps share the embedded log in the data directory
   * (one router at a time, as the README says).
   */
  static async start(
    name: string,
    settings: Record<string, string> = {},
    { eventLog = 'jetstream' }: { eventLog?: 'jetstream' | 'sqlite' } = {},
  ): Promise<StandaloneTopology> {
    const nats = eventLog === 'jetstream' ? await NatsServerProcess.start() : undefined;
    const dataDir = mkdtempSync(join(tmpdir(), `tributary-${name}-`));
    return new StandaloneTopology(nats, dataDir, {
      ...POLLING_ENVIRONMENT,
      ...(nats ? { NATS_URL: nats.url } : {}),
      TRIBUTARY_SECRET_KEY: randomBytes(32).toString('hex'),
      ...settings,
    });
  }

  /** The instance-admin token the Config API printed at its first start. */
  get adminToken(): string {
    if (this.adminTokenOfConfigApi === undefined) throw new Error('start the Config API first');
    return this.adminTokenOfConfigApi;
  }

  /** Starts the Config API first: it creates the instance-admin token the other apps start with. */
  async startConfigApi(): Promise<{ process: TributaryProcess; endpoint: ApiEndpoint }> {
    const child = await spawnTributaryApp('config-api', {
      dataDir: this.dataDir,
      environment: { ...this.environment },
    });
    this.processes.push(child);
    this.adminTokenOfConfigApi = child.adminToken;
    return { process: child, endpoint: this.endpointOf(child) };
  }

  /** `settings` are added to this process's environment only. */
  async spawn(
    app: 'router' | 'tracking-api',
    settings: Record<string, string> = {},
  ): Promise<TributaryProcess> {
    const child = await spawnTributaryApp(app, {
      dataDir: this.dataDir,
      adminToken: this.adminToken,
      environment: { ...this.environment, ...settings },
    });
    this.processes.push(child);
    return child;
  }

  endpointOf(process: TributaryProcess): ApiEndpoint {
    return { baseUrl: process.baseUrl, adminToken: this.adminToken };
  }

  async dispose(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    await Promise.all(this.processes.map((child) => child.kill(signal)));
    await this.nats?.dispose();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
