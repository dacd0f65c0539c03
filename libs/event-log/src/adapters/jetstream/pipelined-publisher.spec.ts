import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { EventLogUnavailableError } from '../../event-log.port';
import { NatsServerProcess } from '../../testing/nats-server.process';
import { JetStreamEventLog } from './jetstream-event-log.adapter';
import { parsePubAck, PipelinedJetStreamPublisher, type PublishPath } from './pipelined-publisher';

const REPOSITORY_ROOT = resolve(__dirname, '../../../../..');

interface InstalledPackage {
  version: string;
  /** The directory the package is installed in. */
  directory: string;
}

/** The version and place of `name` as Node resolves it from `fromDirectory`. */
function installed(name: string, fromDirectory: string): InstalledPackage {
  let directory = dirname(createRequire(join(fromDirectory, 'package.json')).resolve(name));
  for (;;) {
    const manifestPath = join(directory, 'package.json');
    if (existsSync(manifestPath)) {
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { name?: string; version: string };
      if (manifest.name === name) return { version: manifest.version, directory };
    }
    if (dirname(directory) === directory)
      throw new Error(`no package.json of ${name} above ${fromDirectory}`);
    directory = dirname(directory);
  }
}

// The publisher's fast path writes through client internals no semver range promises
// (pipelined-publisher.ts): the client it was checked against is pinned, and must be what runs.
describe('the pinned NATS client', () => {
  const rootManifest = JSON.parse(readFileSync(join(REPOSITORY_ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const pinned = Object.entries(rootManifest.dependencies).filter(([name]) => name.startsWith('@nats-io/'));

  it('pins every @nats-io dependency to one exact version', () => {
    expect(pinned.map(([name]) => name)).toEqual(
      expect.arrayContaining(['@nats-io/jetstream', '@nats-io/nats-core', '@nats-io/transport-node']),
    );
    for (const [name, range] of pinned)
      expect([name, range]).toEqual([name, expect.stringMatching(/^\d+\.\d+\.\d+$/)]);
  });

  it('is what is installed, as seen from the repository and from every other @nats-io package', () => {
    for (const [name, version] of pinned) {
      expect([name, installed(name, REPOSITORY_ROOT).version]).toEqual([name, version]);
      for (const [other] of pinned) {
        const otherDirectory = installed(other, REPOSITORY_ROOT).directory;
        expect([`${name} from ${other}`, installed(name, otherDirectory).version]).toEqual([
          `${name} from ${other}`,
          version,
        ]);
      }
    }
  });
});

describe('parsePubAck', () => {
  it.each([
    // Exactly as nats-server 2.x writes them (read off a real server).
    ['{"stream":"TRACKING", "seq":1}', { sequence: 1, duplicate: false }],
    ['{"stream":"TRACKING", "seq":1,"duplicate": true}', { sequence: 1, duplicate: true }],
    ['{"stream":"TRACKING","seq":9007199254740991}', { sequence: 9007199254740991, duplicate: false }],
    // Other shapes take the JSON.parse path and mean the same.
    ['{"stream":"TRACKING", "domain":"hub", "seq":7}', { sequence: 7, duplicate: false }],
    ['{"seq":3, "stream":"TRACKING", "duplicate":true}', { sequence: 3, duplicate: true }],
  ])('reads %s', (text, expected) => {
    expect(parsePubAck(text)).toEqual(expected);
  });

  it.each([
    [
      '{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"},"stream":"TRACKING","seq":0}',
    ],
    ['{"stream":"TRACKING"}'],
    ['not json'],
    [''],
  ])('refuses %s as not stored', (text) => {
    expect(parsePubAck(text)).toBeInstanceOf(EventLogUnavailableError);
  });
});

describe('PipelinedJetStreamPublisher on a real nats-server', () => {
  let server: NatsServerProcess;
  let connection: NatsConnection;

  beforeAll(async () => {
    server = await NatsServerProcess.start();
    connection = await connect({ servers: server.url });
    await (await jetstreamManager(connection)).streams.add({ name: 'FRAMES', subjects: ['frames.>'] });
  });

  afterAll(async () => {
    await connection?.close();
    await server?.dispose();
  });

  /** What the stream holds for a sequence: the payload text and the Nats-Msg-Id header. */
  async function stored(sequence: number): Promise<{ payload: string; messageId: string | undefined }> {
    const message = await (
      await jetstreamManager(connection)
    ).streams.getMessage('FRAMES', { seq: sequence });
    return { payload: message!.string(), messageId: message!.header.get('Nats-Msg-Id') };
  }

  const batch = (prefix: string) => [
    {
      subject: 'frames.a',
      payload: '{"city":"São Paulo","note":"東京 🚀"}',
      messageId: `${prefix}-événement-𝄞`,
    },
    { subject: 'frames.b', payload: '{"plain":true}', messageId: `${prefix}-plain` },
  ];

  it.each<[string, PublishPath, (nc: NatsConnection) => NatsConnection]>([
    ['one write of HPUB frames', 'frames', (nc: NatsConnection) => nc],
    // A client without the internal writer: the publisher falls back to connection.publish per message.
    [
      'message by message',
      'message-by-message',
      (nc: NatsConnection) =>
        new Proxy(nc, {
          get: (target, key) => {
            if (key === 'protocol') return undefined;
            const value: unknown = Reflect.get(target, key, target);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }),
    ],
  ])('%s: stores every payload and id byte for byte and answers duplicates', async (way, path, wrap) => {
    const publisher = new PipelinedJetStreamPublisher(wrap(connection), 2000);
    try {
      const messages = batch(way);
      const acks = await publisher.publishAll(messages);
      // The real client takes the fast path: if a client upgrade hid the internals it writes through,
      // the fallback would store the same bytes, only slower, and this is what says so.
      expect(publisher.path).toBe(path);
      expect(acks.map((ack) => ack.duplicate)).toEqual([false, false]);
      for (const [index, ack] of acks.entries()) {
        expect(await stored(ack.sequence)).toEqual({
          payload: messages[index].payload,
          messageId: messages[index].messageId,
        });
      }
      const again = await publisher.publishAll(messages.slice(0, 1));
      expect(again).toEqual([{ sequence: acks[0].sequence, duplicate: true }]);
      expect(publisher.batchesWritten).toEqual({
        frames: path === 'frames' ? 2 : 0,
        'message-by-message': path === 'message-by-message' ? 2 : 0,
      });
    } finally {
      publisher.close();
    }
  });

  it('refuses a message over the server max_payload before writing any of its batch', async () => {
    const publisher = new PipelinedJetStreamPublisher(connection, 2000);
    try {
      const tooLarge = 'x'.repeat(connection.info!.max_payload);
      const small = { subject: 'frames.a', payload: '{}', messageId: 'before-the-large-one' };
      await expect(
        publisher.publishAll([small, { subject: 'frames.a', payload: tooLarge, messageId: 'large' }]),
      ).rejects.toThrow(RangeError);
      const [ack] = await publisher.publishAll([small]);
      expect(ack.duplicate).toBe(false);
    } finally {
      publisher.close();
    }
  });

  it('the event log publishes through the fast path of the installed client', async () => {
    const log = await JetStreamEventLog.connect({
      servers: server.url,
      dedupeWindowMs: 60_000,
      retentionMs: 3_600_000,
    });
    try {
      const [outcome] = await log.publishBatch([
        { workspaceId: 'ws', sourceId: 'src', messageId: 'fast-path', payload: { type: 'track' } },
      ]);
      expect(outcome).toEqual({ messageId: 'fast-path', duplicate: false, sequence: expect.any(Number) });
      expect(log.publishPath).toBe('frames');
    } finally {
      await log.close();
    }
  });
});
