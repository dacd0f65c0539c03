/**
 * Realistic tracking messages for the ingest bench, shaped like what @segment/analytics-node 3.x sends
 * from a web backend (track, identify and page with properties, context and `_metadata`), and the
 * exact JSON Tributary stores for each, so the JetStream ceiling publishes payloads of the same sizes.
 *
 * Bodies are built by splicing fresh messageIds into pre-serialized templates: the load generator
 * shares the machine with the server, so it must spend as little CPU per request as possible.
 */
import { normalizeRequest } from '@tributary/ingest';
import { randomUUID } from 'node:crypto';

/**
 * Stands for the messageId in a serialized template; printable (ingest refuses control characters
 * in messageIds) and absent from the generated data.
 */
const MESSAGE_ID_MARK = '@@bench-message-id@@';
const SERIALIZED_MARK = JSON.stringify(MESSAGE_ID_MARK).slice(1, -1);

/** A serialized message with a hole where its messageId goes. */
interface Template {
  before: string;
  after: string;
}

export interface BenchMessages {
  /** How many distinct message shapes are cycled through. */
  templateCount: number;
  /** Sizes in bytes of the messages as sent (compact JSON, one message of the batch). */
  sentBytes: { min: number; max: number; average: number };
  /** Sizes in bytes of the messages as Tributary stores them (the ceiling publishes these). */
  storedBytes: { min: number; max: number; average: number };
  /** Every template as Tributary stores it (with a placeholder messageId), to check messages against a plan. */
  storedMessages: Record<string, unknown>[];
  /** A `/v1/batch` body of `size` messages with fresh messageIds, as analytics-node posts it. */
  batchBody(size: number): string;
  /** The same as `batchBody`, with the messageIds it carries (to time each message on its own). */
  batch(size: number): { body: string; messageIds: string[] };
  /**
   * `size` payloads exactly as Tributary would store them, with fresh messageIds (also returned, for
   * `Nats-Msg-Id`).
   */
  storedBatch(size: number): { messageIds: string[]; payloads: string[] };
}

const EVENTS = [
  'Order Completed',
  'Product Viewed',
  'Product Added',
  'Checkout Started',
  'Signed Up',
  'Subscription Renewed',
  'Search Performed',
  'Coupon Applied',
];
const PAGES = ['Home', 'Pricing', 'Docs', 'Blog', 'Checkout', 'Product', 'Account', 'Search'];
const PLANS = ['free', 'starter', 'pro', 'enterprise'];
const CITIES = ['Berlin', 'München', 'Lisboa', 'San Francisco', 'São Paulo', 'Tokyo', 'Toronto', 'Nairobi'];
const USER_AGENTS = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
];

/** A small deterministic generator, so every run benchmarks the same messages. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** analytics-node's id shape: `node-next-<epoch ms>-<uuid>` (59 characters). */
function nodeMessageId(): string {
  return `node-next-${Date.now()}-${randomUUID()}`;
}

function buildMessage(random: () => number, index: number): Record<string, unknown> {
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)];
  const userId = `user-${(1_000_000 + Math.floor(random() * 9_000_000)).toString(36)}`;
  const anonymousId = randomUUIDFrom(random);
  const timestamp = new Date(Date.UTC(2026, 10, 25, 21, 15, 5) + index * 37).toISOString();
  const page = pick(PAGES);
  const context = {
    library: { name: '@segment/analytics-node', version: '3.1.0' },
    ip: `203.0.113.${Math.floor(random() * 254) + 1}`,
    userAgent: pick(USER_AGENTS),
    locale: pick(['en-US', 'de-DE', 'pt-BR', 'ja-JP']),
  };
  const metadata = { nodeVersion: 'v20.20.2', jsRuntime: 'node' };
  const common = { timestamp, integrations: {}, context, messageId: MESSAGE_ID_MARK, _metadata: metadata };
  const kind = random();
  if (kind < 0.6) {
    return {
      ...common,
      type: 'track',
      event: pick(EVENTS),
      properties: {
        orderId: `ord_${Math.floor(random() * 1e9)}`,
        revenue: Math.round(random() * 50_000) / 100,
        currency: 'EUR',
        plan: pick(PLANS),
        products: Array.from({ length: 1 + Math.floor(random() * 2) }, () => ({
          sku: `SKU-${Math.floor(random() * 1e6)}`,
          price: Math.round(random() * 20_000) / 100,
          quantity: 1 + Math.floor(random() * 3),
        })),
      },
      userId,
    };
  }
  if (kind < 0.85) {
    return {
      ...common,
      type: 'identify',
      traits: {
        email: `${userId}@example.com`,
        name: `Bench User ${index}`,
        plan: pick(PLANS),
        city: pick(CITIES),
        createdAt: timestamp,
        logins: Math.floor(random() * 500),
      },
      userId,
    };
  }
  return {
    ...common,
    type: 'page',
    name: page,
    category: 'Marketing',
    properties: {
      path: `/${page.toLowerCase()}`,
      title: `${page} | Example Shop`,
      url: `https://shop.example.com/${page.toLowerCase()}`,
    },
    anonymousId,
  };
}

function randomUUIDFrom(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

function toTemplate(serialized: string): Template {
  const [before, after, ...rest] = serialized.split(SERIALIZED_MARK);
  if (after === undefined || rest.length > 0) throw new Error('a template must hold exactly one messageId');
  return { before, after };
}

function sizes(values: number[]): { min: number; max: number; average: number } {
  return {
    min: Math.min(...values),
    max: Math.max(...values),
    average: Math.round(values.reduce((sum, value) => sum + value, 0) / values.length),
  };
}

export function createBenchMessages(writeKey: string, templateCount = 500): BenchMessages {
  const random = seededRandom(20261125);
  const messages = Array.from({ length: templateCount }, (_, index) => buildMessage(random, index));
  const sent = messages.map((message) => toTemplate(JSON.stringify(message)));

  // What Tributary stores: the ingest lib's own normalization of the same messages.
  const normalized = normalizeRequest({
    route: 'batch',
    body: JSON.stringify({ batch: messages, writeKey, sentAt: new Date().toISOString() }),
    receivedAt: new Date(),
    generateId: randomUUID,
  });
  if (!normalized.ok || normalized.value.rejected.length > 0) {
    throw new Error(`bench messages do not normalize: ${JSON.stringify(normalized).slice(0, 500)}`);
  }
  const stored = normalized.value.accepted.map(({ message }) => toTemplate(JSON.stringify(message)));

  const idLength = nodeMessageId().length;
  const measure = (templates: Template[]) =>
    sizes(templates.map(({ before, after }) => Buffer.byteLength(before + after) + idLength));

  let next = 0;
  const take = (size: number): number[] => {
    const indexes = Array.from({ length: size }, (_, offset) => (next + offset) % templateCount);
    next = (next + size) % templateCount;
    return indexes;
  };

  return {
    templateCount,
    sentBytes: measure(sent),
    storedBytes: measure(stored),
    storedMessages: normalized.value.accepted.map(({ message }) => message),
    batchBody(size) {
      const items = take(size).map((index) => sent[index].before + nodeMessageId() + sent[index].after);
      return `{"batch":[${items.join(',')}],"writeKey":${JSON.stringify(writeKey)},"sentAt":"${new Date().toISOString()}"}`;
    },
    batch(size) {
      const messageIds: string[] = [];
      const items = take(size).map((index) => {
        const messageId = nodeMessageId();
        messageIds.push(messageId);
        return sent[index].before + messageId + sent[index].after;
      });
      const body = `{"batch":[${items.join(',')}],"writeKey":${JSON.stringify(writeKey)},"sentAt":"${new Date().toISOString()}"}`;
      return { body, messageIds };
    },
    storedBatch(size) {
      const messageIds: string[] = [];
      const payloads = take(size).map((index) => {
        const messageId = nodeMessageId();
        messageIds.push(messageId);
        return stored[index].before + messageId + stored[index].after;
      });
      return { messageIds, payloads };
    },
  };
}
