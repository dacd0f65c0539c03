/**
 * The cluster topology of `docker-compose.cluster.yml` on loopback, for the chaos test: three
 * nats-server processes routed into one JetStream cluster (every stream and consumer three-way),
 * tracking API replicas behind a round-robin balancer, router replicas and the Config API, each a
 * real process started from its built entry point (`dist/`, as the image runs it) with one
 * environment. The config store is SQLite in one data directory the apps share (each sees the
 * others' appends by polling the file) where the compose file runs KurrentDB: KurrentDB cannot run
 * here, and the config store is not what the kills exercise.
 */
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { TRACKING_STREAM } from '@tributary/event-log';
import { NatsServerProcess } from '@tributary/event-log/testing';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { POLLING_ENVIRONMENT } from '../../apps/router/test/router-e2e.kit';
import type { ApiEndpoint } from '../support/tracking-e2e.kit';
import { spawnTributaryApp, type TributaryApp, type TributaryProcess } from '../support/tributary-process';
import { CLUSTER_ENVIRONMENT, CLUSTER_SHAPE } from './cluster-topology.shape';
import { RoundRobinBalancer } from './round-robin-balancer';

/** A NATS node's server name (`--server_name` of `NatsServerProcess.startCluster`), as leaders are named. */
const nodeName = (index: number) => `tributary-test-${index}`;

/** The time of a nats-server log line: `[pid] 2026/11/28 07:55:01.123456 [INF] ...` (local time). */
const NATS_LOG_TIME = /^\[\d+\] (\d{4})\/(\d{2})\/(\d{2}) (\d{2}:\d{2}:\d{2}\.\d{3})/;
/** The time of an app's JSON log line. */
const APP_LOG_TIME = /^\{.*?"time":"([^"]+)"/;

export class ClusterTopology {
  /** Every app process running now, by role. */
  readonly apps: Record<TributaryApp, TributaryProcess[]> = {
    'config-api': [],
    'tracking-api': [],
    router: [],
    tributary: [],
  };
  balancer: RoundRobinBalancer | undefined;
  /** Processes killed and started again: their output still tells what they did before they died. */
  private readonly replaced: Array<{ name: string; app: TributaryProcess }> = [];
  private adminTokenOfConfigApi: string | undefined;

  private constructor(
    readonly nats: NatsServerProcess[],
    private readonly manager: JetStreamManager,
    private readonly managerConnection: NatsConnection,
    readonly dataDir: string,
    readonly environment: Readonly<Record<string, string>>,
  ) {}

  /** The three NATS nodes and the data directory; `settings` are added to every app's environment. */
  static async start(name: string, settings: Record<string, string> = {}): Promise<ClusterTopology> {
    const nats = await NatsServerProcess.startCluster(CLUSTER_SHAPE.natsNodes);
    const natsUrl = nats.map((server) => server.url).join(',');
    const managerConnection = await connect({ servers: natsUrl.split(','), maxReconnectAttempts: -1 });
    const manager = await jetstreamManager(managerConnection, { timeout: 5_000, checkAPI: false });
    // The cluster elects its JetStream meta leader a few seconds after the servers are up; the apps
    // create their streams at start, so they start once it answers.
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await manager.getAccountInfo();
        break;
      } catch (error) {
        if (Date.now() > deadline) {
          await managerConnection.close();
          await Promise.all(nats.map((server) => server.dispose()));
          throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    const dataDir = mkdtempSync(join(tmpdir(), `tributary-${name}-`));
    return new ClusterTopology(nats, manager, managerConnection, dataDir, {
      ...POLLING_ENVIRONMENT,
      ...CLUSTER_ENVIRONMENT,
      NATS_URL: natsUrl,
      TRIBUTARY_SECRET_KEY: randomBytes(32).toString('hex'),
      ...settings,
    });
  }

  get adminToken(): string {
    if (this.adminTokenOfConfigApi === undefined) throw new Error('start the Config API first');
    return this.adminTokenOfConfigApi;
  }

  /** The Config API first (it creates the admin token), then `trackingApis` and `routers` replicas and the balancer. */
  async startApps({
    trackingApis = CLUSTER_SHAPE.trackingApis,
    routers = CLUSTER_SHAPE.routers,
  } = {}): Promise<void> {
    const configApi = await this.startApp('config-api');
    this.adminTokenOfConfigApi = configApi.adminToken;
    // One at a time: each creates or checks the streams, and the machine is small.
    for (let index = 0; index < trackingApis; index++) await this.startApp('tracking-api');
    for (let index = 0; index < routers; index++) await this.startApp('router');
    this.balancer = await RoundRobinBalancer.start(this.apps['tracking-api'].map((app) => app.baseUrl));
  }

  get configApi(): ApiEndpoint {
    return { baseUrl: this.apps['config-api'][0].baseUrl, adminToken: this.adminToken };
  }

  /** Where clients send messages: the balancer in front of the tracking API replicas. */
  get trackingUrl(): string {
    if (!this.balancer) throw new Error('start the apps first');
    return this.balancer.url;
  }

  /** Kills one app process with SIGKILL; `restart` starts it again on the same port and data. */
  async kill(app: TributaryApp, index = 0): Promise<TributaryProcess> {
    const victim = this.apps[app][index];
    await victim.kill('SIGKILL');
    return victim;
  }

  async restart(app: TributaryApp, index = 0): Promise<void> {
    const previous = this.apps[app][index];
    this.replaced.push({ name: `${app} ${index} (before its restart)`, app: previous });
    this.apps[app][index] = await this.spawnApp(app, previous.port);
  }

  /**
   * What the NATS nodes and the apps logged between `from` and `to` (epoch ms), in time order, each
   * line prefixed with who wrote it: the explanation a failed kill owes. Apps log JSON lines with an
   * ISO `time`; nats-server logs `[pid] YYYY/MM/DD hh:mm:ss.micros [LVL] ...` in local time.
   */
  logLines(from: number, to: number): string[] {
    const lines: Array<{ at: number; text: string }> = [];
    const keep = (who: string, at: number, line: string) => {
      if (at >= from && at <= to) lines.push({ at, text: `${new Date(at).toISOString()} ${who}: ${line}` });
    };
    this.nats.forEach((server, index) => {
      for (const line of server.output().split('\n')) {
        const stamp = NATS_LOG_TIME.exec(line);
        if (stamp)
          keep(`nats ${index}`, new Date(`${stamp[1]}-${stamp[2]}-${stamp[3]}T${stamp[4]}`).getTime(), line);
      }
    });
    const apps = [
      ...this.replaced,
      ...Object.entries(this.apps).flatMap(([role, processes]) =>
        processes.map((app, index) => ({ name: `${role} ${index}`, app })),
      ),
    ];
    for (const { name, app } of apps) {
      for (const line of app.output().split('\n')) {
        const at = Date.parse(APP_LOG_TIME.exec(line)?.[1] ?? '');
        if (!Number.isNaN(at)) keep(name, at, line);
      }
    }
    return lines.sort((a, b) => a.at - b.at).map((line) => line.text);
  }

  /** The NATS node leading `TRACKING` and the one leading the consumer, by index in `nats`. */
  async leaders(consumerName: string): Promise<{ stream: number; consumer: number }> {
    const stream = await this.manager.streams.info(TRACKING_STREAM);
    const consumer = await this.manager.consumers.info(TRACKING_STREAM, consumerName);
    return {
      stream: this.nodeIndex(stream.cluster?.leader),
      consumer: this.nodeIndex(consumer.cluster?.leader),
    };
  }

  /**
   * Makes one node lead both `TRACKING` and the consumer, so that one kill costs both elections: the
   * consumer's leader steps down until the election lands on the stream's leader.
   */
  async alignLeaders(consumerName: string): Promise<number> {
    for (let attempt = 0; attempt < 30; attempt++) {
      const { stream, consumer } = await this.leaders(consumerName).catch(() => ({
        stream: -1,
        consumer: -2,
      }));
      if (stream >= 0 && stream === consumer) return stream;
      if (consumer >= 0) {
        await this.managerConnection
          .request(`$JS.API.CONSUMER.LEADER.STEPDOWN.${TRACKING_STREAM}.${consumerName}`, '', {
            timeout: 5_000,
          })
          .catch(() => undefined);
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    throw new Error(`no node came to lead both ${TRACKING_STREAM} and ${consumerName}`);
  }

  async dispose(): Promise<void> {
    const all = Object.values(this.apps).flat();
    await Promise.all(all.map((app) => app.kill('SIGKILL')));
    await this.balancer?.close();
    await this.managerConnection.close().catch(() => undefined);
    await Promise.all(this.nats.map((server) => server.dispose()));
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  private async startApp(app: TributaryApp): Promise<TributaryProcess> {
    const started = await this.spawnApp(app);
    this.apps[app].push(started);
    return started;
  }

  private spawnApp(app: TributaryApp, port?: number): Promise<TributaryProcess> {
    return spawnTributaryApp(app, {
      built: true,
      port,
      dataDir: this.dataDir,
      adminToken: this.adminTokenOfConfigApi,
      environment: { ...this.environment },
    });
  }

  private nodeIndex(serverName: string | undefined): number {
    return this.nats.findIndex((_, index) => nodeName(index) === serverName);
  }
}
