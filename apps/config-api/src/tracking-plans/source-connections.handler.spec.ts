import { DEFAULT_SCHEMA_CONFIG, DomainError, streamNames } from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigProjectionRunner, ConfigReadModel } from '@tributary/config-projections';
import { RecordedEvent, SqliteEventStore } from '@tributary/event-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SourceConnectionsHandler } from './source-connections.handler';

const ws = 'acme';
const time = '2026-01-01T00:00:00.000Z';
const metadata = (requestId: string) => ({ actor: 'access-tokens/1', requestId, time });

/** One Config API process as far as connections go: its own store handle, read model and handler. */
class Replica {
  readonly store: SqliteEventStore;
  private readonly runner = new ConfigProjectionRunner();
  readonly readModel = new ConfigReadModel(this.runner);
  readonly connections: SourceConnectionsHandler;
  private heldReads?: { streamName: string; letThrough: number; arrived: () => void; release: Promise<void> };

  constructor(file: string) {
    this.store = new SqliteEventStore(file, { pollIntervalMs: 5 });
    this.connections = new SourceConnectionsHandler(
      this.readModel,
      new ConfigCommandHandler(this.store, this.readModel),
    );
    const read = this.store.readStream.bind(this.store);
    this.store.readStream = async (streamName: string): Promise<RecordedEvent[]> => {
      const held = this.heldReads;
      if (held?.streamName === streamName && held.letThrough-- === 0) {
        this.heldReads = undefined;
        held.arrived();
        await held.release;
      }
      return read(streamName);
    };
  }

  start(): Promise<void> {
    return this.runner.start(this.store);
  }

  /**
   * A coming read of `streamName`, after `letThrough` others, waits for `release`; resolves when
   * that read has arrived.
   */
  holdRead(streamName: string, release: Promise<void>, letThrough = 0): Promise<void> {
    return new Promise((arrived) => (this.heldReads = { streamName, letThrough, arrived, release }));
  }

  async stop(): Promise<void> {
    await this.runner.stop();
    await this.store.close();
  }
}

describe('SourceConnectionsHandler across two Config API replicas sharing one SQLite event store', () => {
  let directory: string;
  let one: Replica;
  let two: Replica;
  const sourceIds: Record<string, string> = {};

  async function seed(events: { streamName: string; type: string; data: Record<string, unknown> }[]) {
    let position = 0n;
    for (const event of events) {
      ({ position } = await one.store.append(
        event.streamName,
        [{ type: event.type, data: event.data, metadata: metadata('seed') }],
        'no_stream',
      ));
    }
    await Promise.all([one.readModel.waitFor(position), two.readModel.waitFor(position)]);
  }

  const source = (sourceSlug: string) => {
    sourceIds[sourceSlug] = `src_${sourceSlug}`;
    return {
      streamName: streamNames.source(ws, sourceSlug),
      type: 'SourceCreated',
      data: {
        workspaceSlug: ws,
        sourceSlug,
        sourceId: sourceIds[sourceSlug],
        catalogName: 'javascript',
        displayName: sourceSlug,
        writeKey: `write-key-${sourceSlug}`,
        createTime: time,
        schemaConfig: DEFAULT_SCHEMA_CONFIG,
      },
    };
  };
  const plan = (planId: string) => ({
    streamName: streamNames.trackingPlan(ws, planId),
    type: 'TrackingPlanCreated',
    data: {
      workspaceSlug: ws,
      planId,
      displayName: planId,
      rules: { events: [], identify_traits: [], group_traits: [] },
      createTime: time,
      updateTime: time,
    },
  });

  async function connectionEventsOf(sourceSlug: string) {
    return (await one.store.readStream(streamNames.sourceTrackingPlan(sourceIds[sourceSlug]))).map(
      (event) =>
        `${event.type === 'TrackingPlanSourceConnected' ? 'connected' : 'disconnected'} ${event.data.planId}`,
    );
  }

  async function bothCaughtUp(): Promise<void> {
    const [head] = await one.store.readAllBackwards({ maxCount: 1 });
    await Promise.all([one.readModel.waitFor(head.position), two.readModel.waitFor(head.position)]);
  }

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'tributary-connections-'));
    const file = join(directory, 'events.db');
    one = new Replica(file);
    two = new Replica(file);
    await Promise.all([one.start(), two.start()]);
    await seed([
      {
        streamName: streamNames.workspace(ws),
        type: 'WorkspaceCreated',
        data: { slug: ws, id: 'ws_1', displayName: 'Acme', region: 'eu', createTime: time },
      },
      source('web'),
      source('ios'),
      plan('rs_one'),
      plan('rs_two'),
    ]);
  });

  afterEach(async () => {
    await one?.stop();
    await two?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it('connects a source raced for by two replicas, both deciding on the same revision, to exactly one plan; the other is refused as today', async () => {
    const stream = streamNames.sourceTrackingPlan(sourceIds.web);
    let releaseReads!: () => void;
    const release = new Promise<void>((resolve) => (releaseReads = resolve));
    const bothRead = Promise.all([one.holdRead(stream, release, 1), two.holdRead(stream, release, 1)]);
    const outcomes = Promise.allSettled([
      one.connections.connect(ws, 'rs_one', ['web'], metadata('one')),
      two.connections.connect(ws, 'rs_two', ['web'], metadata('two')),
    ]);
    await bothRead;
    releaseReads();
    const [first, second] = await outcomes;

    const fulfilled = [first, second].filter((outcome) => outcome.status === 'fulfilled');
    const rejected = [first, second].filter((outcome) => outcome.status === 'rejected');
    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    const winner = first.status === 'fulfilled' ? 'rs_one' : 'rs_two';
    const refusal = (rejected[0] as PromiseRejectedResult).reason;
    expect(refusal).toBeInstanceOf(DomainError);
    expect({ kind: refusal.kind, message: refusal.message }).toEqual({
      kind: 'already_exists',
      message: `workspaces/${ws}/sources/web is already connected to tracking plan ${winner}`,
    });
    expect(await connectionEventsOf('web')).toEqual([`connected ${winner}`]);
    await bothCaughtUp();
    for (const replica of [one, two]) {
      expect(replica.readModel.trackingPlanIdOfSource(ws, 'web')).toBe(winner);
      expect(replica.readModel.trackingPlan(ws, 'rs_one')!.connectedSourceSlugs).toEqual(
        winner === 'rs_one' ? ['web'] : [],
      );
    }
  });

  it('keeps the invariant when the replicas race as they come, round after round', async () => {
    for (let round = 0; round < 5; round++) {
      const outcomes = await Promise.allSettled([
        one.connections.connect(ws, 'rs_one', ['ios'], metadata(`one-${round}`)),
        two.connections.connect(ws, 'rs_two', ['ios'], metadata(`two-${round}`)),
      ]);
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      await bothCaughtUp();
      const winner = one.readModel.trackingPlanIdOfSource(ws, 'ios')!;
      expect(two.readModel.trackingPlanIdOfSource(ws, 'ios')).toBe(winner);
      await (winner === 'rs_one' ? two : one).connections.disconnect(
        ws,
        winner,
        'ios',
        metadata(`free-${round}`),
      );
      await bothCaughtUp();
    }
    const events = await connectionEventsOf('ios');
    expect(events).toHaveLength(10);
    events.forEach((event, index) =>
      expect(event.startsWith(index % 2 === 0 ? 'connected' : 'disconnected')).toBe(true),
    );
  });

  it('lets the other plan have a source once one replica has disconnected it', async () => {
    await one.connections.connect(ws, 'rs_one', ['web'], metadata('connect'));
    await expect(two.connections.connect(ws, 'rs_two', ['web'], metadata('refused'))).rejects.toThrow(
      'already connected to tracking plan rs_one',
    );
    await one.connections.disconnect(ws, 'rs_one', 'web', metadata('disconnect'));
    await two.connections.connect(ws, 'rs_two', ['web'], metadata('connect-two'));
    expect(await connectionEventsOf('web')).toEqual([
      'connected rs_one',
      'disconnected rs_one',
      'connected rs_two',
    ]);
    await expect(one.connections.disconnect(ws, 'rs_one', 'web', metadata('again'))).rejects.toThrow(
      'source web is not connected to tracking plan rs_one',
    );
  });

  it('connects none of a batch whose source is taken by the other replica midway', async () => {
    const iosStream = streamNames.sourceTrackingPlan(sourceIds.ios);
    let releaseRead!: () => void;
    const release = new Promise<void>((resolve) => (releaseRead = resolve));
    // The first read of its stream is the batch's check; the second, the connection's own.
    const iosRead = one.holdRead(iosStream, release, 1);
    const batch = one.connections.connect(ws, 'rs_one', ['web', 'ios'], metadata('batch'));
    // `web` is connected by now and `ios` was free when the batch was checked; the other replica takes it.
    await iosRead;
    await two.connections.connect(ws, 'rs_two', ['ios'], metadata('taker'));
    releaseRead();

    await expect(batch).rejects.toThrow(
      `workspaces/${ws}/sources/ios is already connected to tracking plan rs_two`,
    );
    expect(await connectionEventsOf('web')).toEqual(['connected rs_one', 'disconnected rs_one']);
    await bothCaughtUp();
    expect(one.readModel.trackingPlanIdOfSource(ws, 'web')).toBeUndefined();
    expect(one.readModel.trackingPlanIdOfSource(ws, 'ios')).toBe('rs_two');
  });

  it('refuses a batch naming a source connected elsewhere or missing before writing anything', async () => {
    await two.connections.connect(ws, 'rs_two', ['ios'], metadata('connect'));
    await bothCaughtUp();
    await expect(one.connections.connect(ws, 'rs_one', ['web', 'ios'], metadata('batch'))).rejects.toThrow(
      'already connected to tracking plan rs_two',
    );
    await expect(one.connections.connect(ws, 'rs_one', ['web', 'ghost'], metadata('batch'))).rejects.toThrow(
      `workspaces/${ws}/sources/ghost not found`,
    );
    expect(await connectionEventsOf('web')).toEqual([]);
  });
});
