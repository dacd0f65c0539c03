import type { EventLog, EventLogSettings } from './event-log.port';
import type { EventLogContractFactory } from './event-log.contract';
import {
  FUNCTION_LOG_MESSAGE_MAX_BYTES,
  FUNCTION_LOG_RETENTION_MS,
  FUNCTION_LOGS_KEPT_PER_FUNCTION,
  InvalidFunctionLogPageTokenError,
  type FunctionLogEntry,
} from './ports/function-logs.port';

/**
 * The contract of `FunctionLogStore` (part of `EventLog`), run against every adapter with the same
 * factory as the event-log contract.
 */
export function describeFunctionLogsContract(
  adapterName: string,
  factory: () => EventLogContractFactory,
): void {
  describe(`FunctionLogStore contract (${adapterName})`, () => {
    const settings: EventLogSettings = { dedupeWindowMs: 60_000, retentionMs: 3_600_000 };
    let log: EventLog;
    let dispose: () => Promise<void>;
    let counter = 0;

    beforeEach(async () => {
      const store = await factory().newStore(settings);
      log = await store.open();
      dispose = async () => {
        await log.close();
        await store.dispose();
      };
    });

    afterEach(async () => {
      jest.restoreAllMocks();
      await dispose();
    });

    function entry(
      functionId: string,
      message: string,
      extra: Partial<FunctionLogEntry> = {},
    ): FunctionLogEntry {
      counter += 1;
      return {
        workspaceId: 'ws1',
        functionId,
        time: new Date(Date.UTC(2025, 0, 1, 0, 0, 0, counter)).toISOString(),
        level: 'log',
        message,
        version: 1,
        invocationId: `inv-${counter}`,
        ...extra,
      };
    }

    const messagesOf = (entries: FunctionLogEntry[]) => entries.map((logged) => logged.message);

    it("keeps every field of an entry and answers a function's entries newest first", async () => {
      const first = entry('dfn_a', 'first', {
        level: 'warn',
        instance: 'workspaces/acme/sources/web/destinations/dfn_a',
        messageId: 'm-1',
        version: 3,
        invocationId: 'inv-first',
      });
      await log.appendFunctionLogs([first, entry('dfn_a', 'second', { level: 'error' })]);
      await log.appendFunctionLogs([entry('dfn_b', 'other function'), entry('dfn_a', 'third')]);

      const page = await log.listFunctionLogs('ws1', 'dfn_a', { pageSize: 10 });
      expect(messagesOf(page.entries)).toEqual(['third', 'second', 'first']);
      expect(page.nextPageToken).toBe('');
      expect(page.entries[2]).toEqual(first);
      // Fields not given are absent, not null.
      expect(page.entries[1]).not.toHaveProperty('instance');
      expect(page.entries[1]).not.toHaveProperty('messageId');
      expect(page.entries[1]).toMatchObject({
        workspaceId: 'ws1',
        functionId: 'dfn_a',
        level: 'error',
        version: 1,
      });
      const other = await log.listFunctionLogs('ws1', 'dfn_b', { pageSize: 10 });
      expect(messagesOf(other.entries)).toEqual(['other function']);
    });

    it('answers nothing for a function without entries, or of another workspace', async () => {
      await log.appendFunctionLogs([entry('dfn_c', 'in ws1')]);
      expect(await log.listFunctionLogs('ws1', 'dfn_never', { pageSize: 10 })).toEqual({
        entries: [],
        nextPageToken: '',
      });
      expect(await log.listFunctionLogs('ws2', 'dfn_c', { pageSize: 10 })).toEqual({
        entries: [],
        nextPageToken: '',
      });
    });

    it('pages newest first with a token, pages staying stable while new entries come', async () => {
      await log.appendFunctionLogs(['e1', 'e2', 'e3', 'e4', 'e5'].map((message) => entry('dfn_p', message)));
      const first = await log.listFunctionLogs('ws1', 'dfn_p', { pageSize: 2 });
      expect(messagesOf(first.entries)).toEqual(['e5', 'e4']);
      expect(first.nextPageToken).not.toBe('');
      await log.appendFunctionLogs([entry('dfn_p', 'e6')]);
      const second = await log.listFunctionLogs('ws1', 'dfn_p', {
        pageSize: 2,
        pageToken: first.nextPageToken,
      });
      expect(messagesOf(second.entries)).toEqual(['e3', 'e2']);
      const third = await log.listFunctionLogs('ws1', 'dfn_p', {
        pageSize: 2,
        pageToken: second.nextPageToken,
      });
      expect(messagesOf(third.entries)).toEqual(['e1']);
      expect(third.nextPageToken).toBe('');
      // A page that ends exactly at the oldest entry says there is no next page.
      const exact = await log.listFunctionLogs('ws1', 'dfn_p', { pageSize: 6 });
      expect(messagesOf(exact.entries)).toEqual(['e6', 'e5', 'e4', 'e3', 'e2', 'e1']);
      expect(exact.nextPageToken).toBe('');
      // An empty token is the first page.
      const again = await log.listFunctionLogs('ws1', 'dfn_p', { pageSize: 1, pageToken: '' });
      expect(messagesOf(again.entries)).toEqual(['e6']);
    });

    it('narrows to one instance, paging within it', async () => {
      const web = 'workspaces/acme/sources/web/destinations/dfn_i';
      const app = 'workspaces/acme/sources/app/destinations/dfn_i';
      await log.appendFunctionLogs([
        entry('dfn_i', 'web-1', { instance: web }),
        entry('dfn_i', 'app-1', { instance: app }),
        entry('dfn_i', 'none'),
        entry('dfn_i', 'web-2', { instance: web }),
        entry('dfn_i', 'app-2', { instance: app }),
        entry('dfn_i', 'web-3', { instance: web }),
      ]);
      const first = await log.listFunctionLogs('ws1', 'dfn_i', { instance: web, pageSize: 2 });
      expect(messagesOf(first.entries)).toEqual(['web-3', 'web-2']);
      const second = await log.listFunctionLogs('ws1', 'dfn_i', {
        instance: web,
        pageSize: 2,
        pageToken: first.nextPageToken,
      });
      expect(messagesOf(second.entries)).toEqual(['web-1']);
      expect(second.nextPageToken).toBe('');
      const ofApp = await log.listFunctionLogs('ws1', 'dfn_i', { instance: app, pageSize: 10 });
      expect(messagesOf(ofApp.entries)).toEqual(['app-2', 'app-1']);
      expect(
        (await log.listFunctionLogs('ws1', 'dfn_i', { instance: 'workspaces/x', pageSize: 10 })).entries,
      ).toEqual([]);
    });

    it(`keeps the newest ${FUNCTION_LOGS_KEPT_PER_FUNCTION} entries of a function, not touching another's`, async () => {
      await log.appendFunctionLogs([entry('dfn_other', 'kept')]);
      const total = FUNCTION_LOGS_KEPT_PER_FUNCTION + 7;
      const messages = Array.from({ length: total }, (_, index) => `n${index}`);
      await log.appendFunctionLogs(messages.slice(0, 998).map((message) => entry('dfn_k', message)));
      await log.appendFunctionLogs(messages.slice(998).map((message) => entry('dfn_k', message)));

      const kept: FunctionLogEntry[] = [];
      let pageToken = '';
      do {
        const page = await log.listFunctionLogs('ws1', 'dfn_k', { pageSize: 300, pageToken });
        kept.push(...page.entries);
        pageToken = page.nextPageToken;
      } while (pageToken);
      expect(kept).toHaveLength(FUNCTION_LOGS_KEPT_PER_FUNCTION);
      expect(messagesOf(kept)).toEqual(messages.slice(7).reverse());
      expect(messagesOf((await log.listFunctionLogs('ws1', 'dfn_other', { pageSize: 5 })).entries)).toEqual([
        'kept',
      ]);
    });

    it("erases one function's entries, idempotently, and keeps storing after", async () => {
      await log.appendFunctionLogs([
        entry('dfn_e', 'old-1'),
        entry('dfn_e', 'old-2'),
        entry('dfn_f', 'stays'),
      ]);
      const before = await log.listFunctionLogs('ws1', 'dfn_e', { pageSize: 1 });
      await log.eraseFunctionLogs('ws1', 'dfn_e');
      expect((await log.listFunctionLogs('ws1', 'dfn_e', { pageSize: 10 })).entries).toEqual([]);
      expect(messagesOf((await log.listFunctionLogs('ws1', 'dfn_f', { pageSize: 10 })).entries)).toEqual([
        'stays',
      ]);
      await log.eraseFunctionLogs('ws1', 'dfn_e');
      await log.eraseFunctionLogs('ws1', 'dfn_never');
      await log.appendFunctionLogs([entry('dfn_e', 'new')]);
      expect(messagesOf((await log.listFunctionLogs('ws1', 'dfn_e', { pageSize: 10 })).entries)).toEqual([
        'new',
      ]);
      // A token from before the erase reads what is older than it: nothing (the new entry is newer).
      const stale = await log.listFunctionLogs('ws1', 'dfn_e', {
        pageSize: 10,
        pageToken: before.nextPageToken,
      });
      expect(stale).toEqual({ entries: [], nextPageToken: '' });
    });

    it(`cuts a message to ${FUNCTION_LOG_MESSAGE_MAX_BYTES} bytes of UTF-8, never inside a character`, async () => {
      // 'é' is two bytes: 4095 bytes of 'a' then 'é' would be cut inside it.
      const long = 'a'.repeat(FUNCTION_LOG_MESSAGE_MAX_BYTES - 1) + 'é'.repeat(100);
      const emoji = '😀'.repeat(FUNCTION_LOG_MESSAGE_MAX_BYTES);
      await log.appendFunctionLogs([entry('dfn_l', long), entry('dfn_l', emoji)]);
      const [cutEmoji, cutLong] = (await log.listFunctionLogs('ws1', 'dfn_l', { pageSize: 10 })).entries;
      expect(cutLong.message).toBe('a'.repeat(FUNCTION_LOG_MESSAGE_MAX_BYTES - 1));
      expect(cutEmoji.message).toBe('😀'.repeat(FUNCTION_LOG_MESSAGE_MAX_BYTES / 4));
      expect(Buffer.byteLength(cutEmoji.message)).toBe(FUNCTION_LOG_MESSAGE_MAX_BYTES);
    });

    it('refuses a malformed entry, storing nothing of its batch', async () => {
      const bad: Array<[string, Partial<FunctionLogEntry> | Record<string, unknown>]> = [
        ['workspace id with a dot', { workspaceId: 'ws.1' }],
        ['function id with a wildcard', { functionId: 'dfn_*' }],
        ['empty function id', { functionId: '' }],
        ['unknown level', { level: 'fatal' }],
        ['time that is not a date', { time: 'yesterday' }],
        ['message that is not a string', { message: 42 }],
        ['negative version', { version: -1 }],
        ['fractional version', { version: 1.5 }],
        ['empty invocation id', { invocationId: '' }],
        ['instance that is not a string', { instance: 7 }],
        ['message id that is not a string', { messageId: null }],
      ];
      for (const [what, change] of bad) {
        const batch = [
          entry('dfn_v', `good before ${what}`),
          { ...entry('dfn_v', what), ...change } as FunctionLogEntry,
        ];
        await expect(log.appendFunctionLogs(batch)).rejects.toThrow(TypeError);
      }
      await expect(log.appendFunctionLogs([null as unknown as FunctionLogEntry])).rejects.toThrow(TypeError);
      expect((await log.listFunctionLogs('ws1', 'dfn_v', { pageSize: 100 })).entries).toEqual([]);
      await log.appendFunctionLogs([]);
      expect((await log.listFunctionLogs('ws1', 'dfn_v', { pageSize: 100 })).entries).toEqual([]);
    });

    it('refuses a page size out of range, an id that is not a subject token and a token it never gave', async () => {
      await log.appendFunctionLogs([entry('dfn_q', 'one')]);
      for (const pageSize of [0, -1, 1.5, 1001, Number.NaN]) {
        await expect(log.listFunctionLogs('ws1', 'dfn_q', { pageSize })).rejects.toThrow(TypeError);
      }
      await expect(log.listFunctionLogs('ws.1', 'dfn_q', { pageSize: 1 })).rejects.toThrow(TypeError);
      await expect(log.listFunctionLogs('ws1', 'dfn>', { pageSize: 1 })).rejects.toThrow(TypeError);
      await expect(log.eraseFunctionLogs('ws1', 'a b')).rejects.toThrow(TypeError);
      const foreign = Buffer.from('offset:3').toString('base64url');
      for (const pageToken of [
        'nonsense',
        foreign,
        Buffer.from('before:0').toString('base64url'),
        'x'.repeat(500),
      ]) {
        await expect(log.listFunctionLogs('ws1', 'dfn_q', { pageSize: 1, pageToken })).rejects.toThrow(
          InvalidFunctionLogPageTokenError,
        );
      }
      expect(messagesOf((await log.listFunctionLogs('ws1', 'dfn_q', { pageSize: 1000 })).entries)).toEqual([
        'one',
      ]);
    });

    it('answers no entry stored more than 24 h ago', async () => {
      await log.appendFunctionLogs([entry('dfn_t', 'yesterday')]);
      const now = Date.now();
      jest.spyOn(Date, 'now').mockReturnValue(now + FUNCTION_LOG_RETENTION_MS + 60_000);
      expect(await log.listFunctionLogs('ws1', 'dfn_t', { pageSize: 10 })).toEqual({
        entries: [],
        nextPageToken: '',
      });
      jest.spyOn(Date, 'now').mockReturnValue(now + FUNCTION_LOG_RETENTION_MS - 60_000);
      expect(messagesOf((await log.listFunctionLogs('ws1', 'dfn_t', { pageSize: 10 })).entries)).toEqual([
        'yesterday',
      ]);
    });

    it('keeps what it stored across a reopen of the same storage', async () => {
      const store = await factory().newStore(settings);
      const first = await store.open();
      try {
        await first.appendFunctionLogs([entry('dfn_r', 'kept')]);
      } finally {
        await first.close();
      }
      const second = await store.open();
      try {
        expect(messagesOf((await second.listFunctionLogs('ws1', 'dfn_r', { pageSize: 10 })).entries)).toEqual(
          ['kept'],
        );
      } finally {
        await second.close();
        await store.dispose();
      }
    });
  });
}
