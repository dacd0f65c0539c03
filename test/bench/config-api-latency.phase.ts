/**
 * Phase 5 of `npm run bench`: Config API write and read latency, each as a ratio to the parts of it
 * that no implementation can avoid, measured in the same run on the same machine.
 *
 * Everything goes through `/v1beta` on one keep-alive connection, one request at a time (latency, not
 * throughput), as an operator's script or a Terraform provider would:
 * - writes, `operations` of each kind: create a source, update it (its schema config: the spec has no
 *   source PATCH, §2.4), create a webhooks destination on it, update that destination's settings,
 *   delete the destination. Each write answers only once the read model holds it (the server's
 *   CommandRunner awaits `waitFor(position)`), and the bench checks the answer shows the change;
 * - reads, `operations` of each kind over what the writes left: get a source, list the workspace's
 *   sources a page at a time (walking the page tokens), get a destination, list a source's destinations.
 * The creates and updates run first, then the reads, then the deletes, so the reads have a population
 * and no write's aftermath (the router reacting to a new destination) runs under them.
 *
 * Baselines, sampled between the API requests so that both see the same moments of machine load:
 * - the HTTP floor: `GET /health/live` of the same server on the same connection, one after every API
 *   request. Read ratio = read p50 / floor p50;
 * - the raw append: after each write the bench reads the events the server just appended (through the
 *   `EventStore` port, opened on the server's data directory as the server opens it, untimed) and
 *   appends the same events to the same stream, named by its aggregate, with the same expected revision
 *   through the `EventStore` port (the embedded store, in a fresh data directory beside the server's,
 *   in this process), timed. Write ratio = write p50 / (floor p50 + append p50).
 */
import { destinationAggregate, sourceAggregate } from '@tributary/config-domain';
import { createEventStore, type EventStore, type ExpectedRevision } from '@tributary/event-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { round, summarizeLatencies, type PhaseResult } from './load-loop';
import { OneConnectionClient, type TimedResponse } from './one-connection.client';
import { printTable } from './print-table';

export const WRITE_KINDS = [
  'create source',
  'update source',
  'create destination',
  'update destination',
  'delete destination',
] as const;
export const READ_KINDS = ['get source', 'list sources', 'get destination', 'list destinations'] as const;
export type WriteKind = (typeof WRITE_KINDS)[number];
export type ReadKind = (typeof READ_KINDS)[number];

/** Rounds of the whole cycle on sources of their own before anything is counted (JIT, caches, SQLite). */
const DEFAULT_WARMUP_ROUNDS = 10;
/** Sources per page when listing; the walk wraps around after the last page. */
const LIST_PAGE_SIZE = 50;
const FLOOR_PATH = '/health/live';
const DESTINATION = 'webhooks';

export type LatencyFigures = PhaseResult['latencyMs'] & { count: number };
export type ApiLatencyFigures = LatencyFigures & {
  /** Floor p50 for reads; floor p50 plus raw append p50 of the same kind for writes. */
  baselineP50Ms: number;
  /** p50 over baselineP50Ms. */
  ratio: number;
};
export type RawAppendFigures = LatencyFigures & {
  /** Events per append (per API write): 1 for every kind today. */
  eventsPerAppend: number;
  /** Average size of the events appended, as type + JSON data + JSON metadata. */
  averageEventBytes: number;
};

export interface ConfigApiLatencyResult {
  operationsPerKind: number;
  warmupRounds: number;
  listPageSize: number;
  /** Connections the client opened over the whole phase; 1 unless the server closed one. */
  connections: number;
  writes: { overall: ApiLatencyFigures; byKind: Record<WriteKind, ApiLatencyFigures> };
  reads: { overall: ApiLatencyFigures; byKind: Record<ReadKind, ApiLatencyFigures> };
  floor: LatencyFigures & { path: string };
  rawAppend: { overall: RawAppendFigures; byKind: Record<WriteKind, RawAppendFigures> };
  /** writes.overall.ratio */
  writeRatio: number;
  /** reads.overall.ratio */
  readRatio: number;
}

export async function measureConfigApiLatency(options: {
  baseUrl: string;
  adminToken: string;
  workspace: string;
  /** The server's DATA_DIR: its event store is where the bench finds the events each write appended. */
  serverDataDirectory: string;
  operations: number;
  warmupRounds?: number;
}): Promise<ConfigApiLatencyResult> {
  const warmupRounds = options.warmupRounds ?? DEFAULT_WARMUP_ROUNDS;
  const client = new OneConnectionClient(options.baseUrl, `Bearer ${options.adminToken}`);
  const serverStore = createEventStore({ dataDir: options.serverDataDirectory });
  // Beside the server's data directory, so both stores sit on the same disk.
  const baselineDirectory = mkdtempSync(
    join(dirname(options.serverDataDirectory), 'tributary-bench-append-'),
  );
  const baselineStore = createEventStore({ dataDir: baselineDirectory });
  const run = new ConfigApiRun(client, serverStore, baselineStore, options.workspace);
  try {
    run.recording = false;
    for (let round = 0; round < warmupRounds; round += 1) {
      const slug = `config-warmup-${round}`;
      await run.createAndUpdate(slug);
      await run.readAll(slug);
      await run.deleteDestination(slug);
    }

    run.recording = true;
    const slugs = Array.from({ length: options.operations }, (_, index) => `config-${index}`);
    for (const slug of slugs) await run.createAndUpdate(slug);
    for (const slug of slugs) await run.readAll(slug);
    for (const slug of slugs) await run.deleteDestination(slug);

    return run.result(options.operations, warmupRounds);
  } finally {
    client.close();
    await serverStore.close();
    await baselineStore.close();
    rmSync(baselineDirectory, { recursive: true, force: true });
  }
}

/** The requests of the phase, their checks, and the samples they leave. */
class ConfigApiRun {
  /** Off during the warm-up: requests run and are checked, nothing is kept. */
  recording = false;
  private readonly writes = samplesOf(WRITE_KINDS);
  private readonly reads = samplesOf(READ_KINDS);
  private readonly appends = samplesOf(WRITE_KINDS);
  private readonly floor: number[] = [];
  private readonly appendedEvents = countsOf(WRITE_KINDS);
  private readonly appendedBytes = countsOf(WRITE_KINDS);
  /** Last revision of each stream the phase wrote to, as far as the bench has replayed it. */
  private readonly replayedRevisions = new Map<string, number>();
  private readonly sourceIds = new Map<string, string>();
  private nextPageToken = '';

  constructor(
    private readonly client: OneConnectionClient,
    private readonly serverStore: EventStore,
    private readonly baselineStore: EventStore,
    private readonly workspace: string,
  ) {}

  async createAndUpdate(slug: string): Promise<void> {
    const sources = `/v1beta/workspaces/${this.workspace}/sources`;
    const sourceName = `workspaces/${this.workspace}/sources/${slug}`;
    const sourceStream = sourceAggregate.streamName({ workspaceSlug: this.workspace, sourceSlug: slug });
    await this.write('create source', sourceStream, 'POST', sources, {
      body: { source: { name: sourceName, catalog_name: 'catalog/sources/node' } },
      check: (source) => {
        if (source.name !== sourceName || typeof source.id !== 'string') return 'not the source created';
        this.sourceIds.set(slug, source.id);
        return null;
      },
    });
    await this.write('update source', sourceStream, 'PATCH', `${sources}/${slug}/schema-config`, {
      body: {
        schema_config: { allow_unplanned_track_events: false },
        update_mask: { paths: ['schema_config.allow_unplanned_track_events'] },
      },
      check: (schemaConfig) =>
        schemaConfig.allow_unplanned_track_events === false ? null : 'the change is not in the answer',
    });

    const destinationName = `${sourceName}/destinations/${DESTINATION}`;
    const destinationStream = destinationAggregate.streamName({
      sourceId: this.sourceIds.get(slug)!,
      destinationSlug: DESTINATION,
    });
    const firstUrl = `http://127.0.0.1:9/${slug}`;
    await this.write('create destination', destinationStream, 'POST', `${sources}/${slug}/destinations`, {
      body: {
        destination: {
          name: destinationName,
          connection_mode: 'CLOUD',
          // Disabled: the router starts no consumer for it, and nothing is sent to the dead port.
          enabled: false,
          config: [
            { name: `${destinationName}/config/url`, value: firstUrl },
            { name: `${destinationName}/config/shared_secret`, value: `secret-${slug}` },
          ],
        },
      },
      check: (destination) =>
        destination.name === destinationName && configValue(destination, 'url') === firstUrl
          ? null
          : 'not the destination created',
    });
    const secondUrl = `http://127.0.0.1:9/${slug}/v2`;
    await this.write('update destination', destinationStream, 'PATCH', `/v1beta/${destinationName}`, {
      body: {
        destination: { config: [{ name: `${destinationName}/config/url`, value: secondUrl }] },
        update_mask: { paths: ['destination.config'] },
      },
      check: (destination) =>
        configValue(destination, 'url') === secondUrl ? null : 'the change is not in the answer',
    });
  }

  async readAll(slug: string): Promise<void> {
    const sources = `/v1beta/workspaces/${this.workspace}/sources`;
    const sourceName = `workspaces/${this.workspace}/sources/${slug}`;
    const destinationName = `${sourceName}/destinations/${DESTINATION}`;
    await this.read('get source', `/v1beta/${sourceName}`, (source) =>
      source.name === sourceName ? null : 'not the source asked for',
    );
    const pageQuery = `page_size=${LIST_PAGE_SIZE}${this.nextPageToken ? `&page_token=${this.nextPageToken}` : ''}`;
    await this.read('list sources', `${sources}?${pageQuery}`, (list) => {
      if (
        !Array.isArray(list.sources) ||
        list.sources.length === 0 ||
        typeof list.next_page_token !== 'string'
      )
        return 'not a page of sources';
      this.nextPageToken = list.next_page_token;
      return null;
    });
    await this.read('get destination', `/v1beta/${destinationName}`, (destination) =>
      destination.name === destinationName ? null : 'not the destination asked for',
    );
    await this.read('list destinations', `${sources}/${slug}/destinations`, (list) =>
      Array.isArray(list.destinations) && list.destinations.length === 1
        ? null
        : 'not the one destination of the source',
    );
  }

  async deleteDestination(slug: string): Promise<void> {
    const destinationName = `workspaces/${this.workspace}/sources/${slug}/destinations/${DESTINATION}`;
    const destinationStream = destinationAggregate.streamName({
      sourceId: this.sourceIds.get(slug)!,
      destinationSlug: DESTINATION,
    });
    await this.write('delete destination', destinationStream, 'DELETE', `/v1beta/${destinationName}`, {
      check: (answer) => (Object.keys(answer).length === 0 ? null : 'the answer is not {}'),
    });
    // Read-your-writes, untimed: the next request already misses it.
    const after = await this.client.request('GET', `/v1beta/${destinationName}`);
    if (after.status !== 404)
      throw new Error(`GET ${destinationName} after its delete: ${after.status} ${after.text}`);
  }

  result(operations: number, warmupRounds: number): ConfigApiLatencyResult {
    const floor = figuresOf(this.floor);
    const rawByKind = mapKinds(WRITE_KINDS, (kind) => ({
      ...figuresOf(this.appends[kind]),
      eventsPerAppend: round(this.appendedEvents[kind] / this.appends[kind].length, 2),
      averageEventBytes: Math.round(this.appendedBytes[kind] / this.appendedEvents[kind]),
    }));
    const allEvents = sum(WRITE_KINDS.map((kind) => this.appendedEvents[kind]));
    const rawOverall: RawAppendFigures = {
      ...figuresOf(WRITE_KINDS.flatMap((kind) => this.appends[kind])),
      eventsPerAppend: round(allEvents / sum(WRITE_KINDS.map((kind) => this.appends[kind].length)), 2),
      averageEventBytes: Math.round(sum(WRITE_KINDS.map((kind) => this.appendedBytes[kind])) / allEvents),
    };
    const writesByKind = mapKinds(WRITE_KINDS, (kind) =>
      againstBaseline(this.writes[kind], floor.p50 + rawByKind[kind].p50),
    );
    const writesOverall = againstBaseline(
      WRITE_KINDS.flatMap((kind) => this.writes[kind]),
      floor.p50 + rawOverall.p50,
    );
    const readsByKind = mapKinds(READ_KINDS, (kind) => againstBaseline(this.reads[kind], floor.p50));
    const readsOverall = againstBaseline(
      READ_KINDS.flatMap((kind) => this.reads[kind]),
      floor.p50,
    );
    return {
      operationsPerKind: operations,
      warmupRounds,
      listPageSize: LIST_PAGE_SIZE,
      connections: this.client.connections,
      writes: { overall: writesOverall, byKind: writesByKind },
      reads: { overall: readsOverall, byKind: readsByKind },
      floor: { path: FLOOR_PATH, ...floor },
      rawAppend: { overall: rawOverall, byKind: rawByKind },
      writeRatio: writesOverall.ratio,
      readRatio: readsOverall.ratio,
    };
  }

  private async write(
    kind: WriteKind,
    streamName: string,
    method: 'POST' | 'PATCH' | 'DELETE',
    path: string,
    request: { body?: unknown; check: (answer: any) => string | null },
  ): Promise<void> {
    const response = await this.client.request(method, path, request.body);
    expectAnswer(response, `${method} ${path}`, request.check);
    if (this.recording) this.writes[kind].push(response.ms);
    await this.appendTheSameEvents(kind, streamName);
    await this.sampleFloor();
  }

  private async read(kind: ReadKind, path: string, check: (answer: any) => string | null): Promise<void> {
    const response = await this.client.request('GET', path);
    expectAnswer(response, `GET ${path}`, check);
    if (this.recording) this.reads[kind].push(response.ms);
    await this.sampleFloor();
  }

  /**
   * The write's unavoidable storage cost: the events the server appended for it, appended again to the
   * baseline store with the same expected revision. Every write must have appended something.
   */
  private async appendTheSameEvents(kind: WriteKind, streamName: string): Promise<void> {
    const replayedRevision = this.replayedRevisions.get(streamName);
    const recorded = (await this.serverStore.readStream(streamName)).filter(
      (event) => event.revision > (replayedRevision ?? -1),
    );
    if (recorded.length === 0) throw new Error(`${kind} answered 200 but appended no event to ${streamName}`);
    const events = recorded.map(({ type, data, metadata }) => ({ type, data, metadata }));
    const expectedRevision: ExpectedRevision = replayedRevision ?? 'no_stream';
    const startedAt = performance.now();
    const appended = await this.baselineStore.append(streamName, events, expectedRevision);
    const ms = performance.now() - startedAt;
    this.replayedRevisions.set(streamName, appended.revision);
    if (!this.recording) return;
    this.appends[kind].push(ms);
    this.appendedEvents[kind] += events.length;
    this.appendedBytes[kind] += sum(
      events.map(
        (event) =>
          Buffer.byteLength(event.type) +
          Buffer.byteLength(JSON.stringify(event.data)) +
          Buffer.byteLength(JSON.stringify(event.metadata)),
      ),
    );
  }

  /**
   * Two floor requests, the second one timed. The first absorbs what the server still does after it
   * answered the API request (response hooks, the router's listeners to config changes), which would
   * otherwise be charged to the floor; so the timed floor request and every API request alike follow
   * a floor request.
   */
  private async sampleFloor(): Promise<void> {
    for (const timed of [false, true]) {
      const response = await this.client.request('GET', FLOOR_PATH, undefined, { authorized: false });
      if (response.status !== 200) throw new Error(`GET ${FLOOR_PATH}: ${response.status} ${response.text}`);
      if (timed && this.recording) this.floor.push(response.ms);
    }
  }
}

export function printConfigApiTable(result: ConfigApiLatencyResult): void {
  const row = (label: string, figures: LatencyFigures, baseline?: ApiLatencyFigures) => [
    label,
    String(figures.count),
    figures.p50.toFixed(2),
    figures.p95.toFixed(2),
    figures.p99.toFixed(2),
    figures.max.toFixed(2),
    baseline ? baseline.baselineP50Ms.toFixed(2) : '',
    baseline ? baseline.ratio.toFixed(2) : '',
  ];
  const rows: string[][] = [
    ['Config API (ms)', 'requests', 'p50', 'p95', 'p99', 'max', 'baseline p50', 'ratio p50'],
    ...WRITE_KINDS.map((kind) => {
      const figures = result.writes.byKind[kind];
      return row(`write: ${kind}`, figures, figures);
    }),
    row('write: all', result.writes.overall, result.writes.overall),
    ...READ_KINDS.map((kind) => {
      const figures = result.reads.byKind[kind];
      return row(`read: ${kind}`, figures, figures);
    }),
    row('read: all', result.reads.overall, result.reads.overall),
    row(`floor: GET ${result.floor.path}`, result.floor),
    ...WRITE_KINDS.map((kind) => row(`raw append: ${kind}`, result.rawAppend.byKind[kind])),
    row('raw append: all', result.rawAppend.overall),
  ];
  printTable(rows);
  console.log(
    `ratio Config API write / (floor + raw append): ${result.writeRatio.toFixed(2)}; ` +
      `read / floor: ${result.readRatio.toFixed(2)} (p50s; no goal set, see BENCHMARKS.md)`,
  );
  const eventSizes = WRITE_KINDS.map(
    (kind) => `${kind} ${result.rawAppend.byKind[kind].averageEventBytes} B`,
  ).join(', ');
  console.log(
    `one keep-alive connection (${result.connections} opened), one request at a time, after ` +
      `${result.warmupRounds} warm-up rounds; list sources walks pages of ${result.listPageSize}; ` +
      `raw append = the same events through the SQLite EventStore in the bench process (${eventSizes})`,
  );
}

function expectAnswer(response: TimedResponse, request: string, check: (answer: any) => string | null): void {
  if (response.status !== 200) throw new Error(`${request}: ${response.status} ${response.text}`);
  const problem = check(JSON.parse(response.text));
  if (problem) throw new Error(`${request}: ${problem}: ${response.text.slice(0, 300)}`);
}

function configValue(destination: any, key: string): unknown {
  const entries: Array<{ name: string; value: unknown }> = destination.config ?? [];
  return entries.find((entry) => entry.name.endsWith(`/config/${key}`))?.value;
}

function againstBaseline(samples: number[], baselineP50Ms: number): ApiLatencyFigures {
  const figures = figuresOf(samples);
  return {
    ...figures,
    baselineP50Ms: round(baselineP50Ms, 2),
    ratio: round(figures.p50 / baselineP50Ms, 2),
  };
}

function figuresOf(samples: number[]): LatencyFigures {
  return { count: samples.length, ...summarizeLatencies(samples) };
}

function samplesOf<Kind extends string>(kinds: readonly Kind[]): Record<Kind, number[]> {
  return mapKinds(kinds, () => []);
}

function countsOf<Kind extends string>(kinds: readonly Kind[]): Record<Kind, number> {
  return mapKinds(kinds, () => 0);
}

function mapKinds<Kind extends string, Value>(
  kinds: readonly Kind[],
  value: (kind: Kind) => Value,
): Record<Kind, Value> {
  return Object.fromEntries(kinds.map((kind) => [kind, value(kind)])) as Record<Kind, Value>;
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
