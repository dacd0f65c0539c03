// `tributary import`: a historical NDJSON import through /v1/import against a real server, read back
// from the server's own event log; interruption and rerun; retries through a faulty proxy.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { TrackingCounters } from '../../tracking-api/src/shared/tracking-counters';
import {
  createWorkspaceAndSource,
  pollUntil,
  readSourceMessages,
  type StoredMessage,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import { importNdjson, type ImportSummary } from '../src/import/ndjson-importer';
import { generateHistory, runCliInProcess, spawnCli, startFaultyProxy } from './cli-e2e.kit';

/** The line number each stored message came from (every generated message carries it). */
function lineOf(message: StoredMessage): number {
  return message.payload.properties?.line ?? message.payload.traits?.line;
}

describe('tributary import', () => {
  let t: TributaryTestInstance;
  let directory: string;

  beforeAll(async () => {
    t = await startTributary();
    directory = mkdtempSync(join(tmpdir(), 'tributary-cli-import-'));
  });
  afterAll(async () => {
    await t.stop({ removeData: true });
    rmSync(directory, { recursive: true, force: true });
  });

  function counters(): TrackingCounters {
    return t.app.get(TrackingCounters);
  }

  function writeHistory(name: string, count: number) {
    const history = generateHistory(count, name);
    const file = join(directory, `${name}.ndjson`);
    writeFileSync(file, history.lines.join('\n') + '\n');
    return { ...history, file };
  }

  async function importFile(
    source: TestSource,
    file: string,
    extra: string[] = [],
    options: { url?: string; interrupt?: AbortSignal } = {},
  ) {
    const run = await runCliInProcess(['--json', 'import', file, '--write-key', source.writeKey, ...extra], {
      env: { TRIBUTARY_URL: options.url ?? t.baseUrl },
      interrupt: options.interrupt,
    });
    return { ...run, summary: run.json() as ImportSummary };
  }

  it('imports a few thousand lines: valid messages keep their timestamps, bad lines and rejections are reported by line', async () => {
    const source = await createWorkspaceAndSource(t);
    const history = writeHistory('full', 3000);
    const duplicatesBefore = counters().duplicates;

    const run = await importFile(source, history.file, ['--batch-size', '250']);
    const { summary } = run;
    const validCount = history.validIds.size;
    expect(run.code).toBe(2); // finished, with lines left out
    expect(summary).toMatchObject({
      status: 'completed',
      linesRead: 3000,
      blankLines: 6,
      badLines: history.badLines.length,
      sent: validCount + history.rejected.size,
      accepted: validCount,
      rejected: history.rejected.size,
      refusedBatches: [],
      retriedBatches: 0,
      lastAcceptedLine: 3000,
    });
    expect(summary.badLineDetails.map((bad) => bad.line)).toEqual(history.badLines);
    expect(summary.badLineDetails[0].reason).toMatch(/^not valid JSON/);
    expect(summary.badLineDetails[1].reason).toBe('not a JSON object (an array)');
    expect(summary.badLineDetails[2].reason).toBe('not a JSON object (number)');
    expect(summary.badLineDetails[3].reason).toMatch(/larger than the server's 32 KiB limit/);
    expect(
      Object.fromEntries(summary.rejectedDetails.map((rejection) => [rejection.line, rejection.code])),
    ).toEqual(Object.fromEntries(history.rejected));
    expect(summary.rejectedByCode).toEqual({ missing_event: 4, no_user_anon_id: 4 });
    // Bad lines are reported on stderr as they are found, with their line numbers.
    expect(run.stderr).toContain(`line ${history.badLines[0]}: not valid JSON`);

    const stored = await readSourceMessages(t, source); // fails if a messageId is stored twice
    expect(stored.size).toBe(validCount);
    for (const message of stored.values()) {
      const line = lineOf(message);
      expect(history.validIds.has(line)).toBe(true);
      const expectedId = history.validIds.get(line);
      if (expectedId) expect(message.messageId).toBe(expectedId);
      else expect(message.messageId).toMatch(/^import-[0-9a-f]{40}$/);
      // Historical: the message's own time, not shifted by its (dropped) sentAt nor set to now.
      const timestamp = history.timestamps.get(String(line));
      expect({
        line,
        timestamp: message.payload.timestamp,
        originalTimestamp: message.payload.originalTimestamp,
      }).toEqual({
        line,
        timestamp,
        originalTimestamp: timestamp,
      });
    }
    expect(counters().duplicates).toBe(duplicatesBefore);

    // The resume point says complete: a rerun sends nothing.
    const point = JSON.parse(readFileSync(`${history.file}.resume.json`, 'utf8'));
    expect(point).toMatchObject({
      version: 1,
      lastAcceptedLine: 3000,
      acceptedMessages: validCount,
      completed: true,
    });
    const rerun = await runCliInProcess(['import', history.file, '--write-key', source.writeKey], {
      env: { TRIBUTARY_URL: t.baseUrl },
    });
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toMatch(/^lines read: +0$/m);
    expect(rerun.stdout).toMatch(/^messages sent: +0$/m);
    expect(rerun.stdout).toContain('Nothing left to send');
    expect((await readSourceMessages(t, source)).size).toBe(validCount);
  }, 60_000);

  it('prints a readable summary with reasons, and exits 0 when every line was imported', async () => {
    const source = await createWorkspaceAndSource(t);
    const file = join(directory, 'clean.ndjson');
    writeFileSync(
      file,
      [
        '{"type":"track","userId":"a","event":"A","timestamp":"2020-05-06T07:08:09.010Z"}',
        '{"type":"page","anonymousId":"b","name":"Home"}',
      ].join('\r\n'),
    );
    const run = await runCliInProcess(['import', file, '--write-key', source.writeKey, '--no-gzip'], {
      env: { TRIBUTARY_URL: t.baseUrl },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^status: +completed$/m);
    expect(run.stdout).toMatch(/^lines read: +2$/m);
    expect(run.stdout).toMatch(/^accepted: +2$/m);
    expect(run.stdout).toMatch(/^batches retried: +0 \(0 retries\)$/m);
    expect(run.stdout).toMatch(/^duration: +\d+\.\d s$/m);
    const stored = [...(await readSourceMessages(t, source)).values()];
    expect(stored.map((message) => message.payload.type).sort()).toEqual(['page', 'track']);

    const rejecting = join(directory, 'rejecting.ndjson');
    writeFileSync(rejecting, '{"type":"track","userId":"a"}\n');
    const withRejection = await runCliInProcess(['import', rejecting, '--write-key', source.writeKey], {
      env: { TRIBUTARY_URL: t.baseUrl },
    });
    expect(withRejection.code).toBe(2);
    expect(withRejection.stdout).toMatch(
      /Rejected by the server:\n  missing_event: 1\n  line 1 \(import-[0-9a-f]+\): missing_event: /,
    );
  });

  it('closes a batch before it passes the byte limit, and the resume point follows each one', async () => {
    const source = await createWorkspaceAndSource(t);
    const file = join(directory, 'bytes.ndjson');
    const lines = Array.from({ length: 40 }, (_, index) =>
      JSON.stringify({
        type: 'track',
        userId: 'u',
        event: 'E',
        messageId: `bytes-${index + 1}`,
        properties: { line: index + 1, pad: 'x'.repeat(900) },
      }),
    );
    writeFileSync(file, lines.join('\n') + '\n');
    const resumeFile = join(directory, 'bytes.resume.json');
    const points: number[] = [];
    const summary = await importNdjson({
      file,
      resumeFile,
      restart: false,
      batchSize: 500,
      maxBatchBytes: 5000, // about five messages of ~960 bytes
      baseUrl: t.baseUrl,
      writeKey: source.writeKey,
      gzip: true,
      maxRetries: 0,
      retryBaseMs: 1,
      maxBackoffMs: 1,
      requestTimeoutMs: 10_000,
      progress: {
        start: () => undefined,
        update: () => points.push(JSON.parse(readFileSync(resumeFile, 'utf8')).lastAcceptedLine),
        badLine: () => undefined,
        retry: () => undefined,
        stop: () => undefined,
      },
    });
    expect(summary).toMatchObject({ status: 'completed', accepted: 40, batches: 8 });
    expect(points).toEqual([5, 10, 15, 20, 25, 30, 35, 40]);
    expect((await readSourceMessages(t, source)).size).toBe(40);
  });

  it('draws a progress bar on a terminal, and plain progress lines elsewhere, on stderr only', async () => {
    const source = await createWorkspaceAndSource(t);
    const history = writeHistory('progress', 800);
    const onTerminal = await runCliInProcess(
      ['--json', 'import', history.file, '--write-key', source.writeKey, '--batch-size', '100'],
      {
        env: { TRIBUTARY_URL: t.baseUrl },
        stderrIsTTY: true,
      },
    );
    expect(onTerminal.json()).toMatchObject({ status: 'completed', linesRead: 800 }); // stdout: the summary only
    expect(onTerminal.stderr).toMatch(
      /import \[[█░]+\] 100% \| 800 lines \| \d+ accepted \| 2 bad \| 0 retried/,
    );
    expect(onTerminal.stderr).toContain('line 397: not valid JSON');

    const plain = await runCliInProcess(
      [
        'import',
        history.file,
        '--write-key',
        source.writeKey,
        '--batch-size',
        '100',
        '--restart',
        '--progress-interval',
        '0',
      ],
      { env: { TRIBUTARY_URL: t.baseUrl } },
    );
    expect(plain.stderr).toMatch(
      /^progress: 100% of the file, 800 lines read, \d+ accepted, 2 bad, 0 batches retried$/m,
    );
    expect(plain.stderr).not.toContain('\x1b[');
  });

  it('stops at a wrong write key without moving the resume point, and refuses a resume point of a changed file', async () => {
    const source = await createWorkspaceAndSource(t);
    const history = writeHistory('guarded', 300);
    const wrongKey = await runCliInProcess(['--json', 'import', history.file, '--write-key', 'no-such-key'], {
      env: { TRIBUTARY_URL: t.baseUrl },
    });
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.json()).toMatchObject({
      status: 'aborted',
      abortedBy: 'refused',
      accepted: 0,
      sent: 0,
      lastAcceptedLine: 0,
    });
    expect(wrongKey.json().reason).toMatch(/refused the write key: HTTP 401 invalid_write_key/);

    const half = await importFile(source, history.file, ['--batch-size', '100'], {});
    expect(half.summary.status).toBe('completed');
    appendFileSync(
      history.file,
      JSON.stringify({ type: 'track', userId: 'late', event: 'Late', properties: { line: 301 } }) + '\n',
    );
    const changed = await runCliInProcess(['import', history.file, '--write-key', source.writeKey], {
      env: { TRIBUTARY_URL: t.baseUrl },
    });
    expect(changed.code).toBe(1);
    expect(changed.stderr).toMatch(/was written for a different version of the file .*pass --restart/);
    // --restart sends everything again; the server deduplicates what it already has.
    const duplicatesBefore = counters().duplicates;
    const restarted = await importFile(source, history.file, ['--restart']);
    expect(restarted.summary).toMatchObject({ status: 'completed', linesRead: 301, resumedAfterLine: 0 });
    expect(counters().duplicates - duplicatesBefore).toBe(history.validIds.size);
    expect((await readSourceMessages(t, source)).size).toBe(history.validIds.size + 1);

    const missingFile = await runCliInProcess(
      ['import', join(directory, 'absent.ndjson'), '--write-key', source.writeKey],
      { env: { TRIBUTARY_URL: t.baseUrl } },
    );
    expect(missingFile).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/cannot read .*absent\.ndjson: ENOENT/),
    });
    const noKey = await runCliInProcess(['import', history.file], { env: { TRIBUTARY_URL: t.baseUrl } });
    expect(noKey).toMatchObject({
      code: 1,
      stderr: 'error: no write key: set TRIBUTARY_WRITE_KEY or pass --write-key-file (or --write-key)\n',
    });
  });

  it('killed midway (SIGKILL in a child process), a rerun sends only the rest and nothing is stored twice', async () => {
    const source = await createWorkspaceAndSource(t);
    const history = writeHistory('killed', 2000);
    // Three batches reach the server; the fourth is held until the process is killed.
    const proxy = await startFaultyProxy(t.baseUrl, (index) => (index <= 3 ? 'forward' : 'hang'));
    const resumeFile = join(directory, 'killed.resume.json');
    try {
      const child = spawnCli(
        [
          'import',
          history.file,
          '--write-key',
          source.writeKey,
          '--batch-size',
          '200',
          '--resume-file',
          resumeFile,
        ],
        {
          TRIBUTARY_URL: proxy.url,
        },
      );
      await pollUntil('the fourth batch', 20_000, async () => (proxy.requests >= 4 ? true : undefined));
      // The resume point is written right after the third answer; give the child a moment for it.
      await pollUntil('the resume point after three batches', 5_000, async () =>
        existsSync(resumeFile) && JSON.parse(readFileSync(resumeFile, 'utf8')).acceptedMessages > 0
          ? true
          : undefined,
      );
      child.kill('SIGKILL');
      await once(child, 'exit');
    } finally {
      await proxy.close();
    }
    const point = JSON.parse(readFileSync(resumeFile, 'utf8'));
    expect(point.completed).toBe(false);
    const acceptedFirst = [...history.validIds.keys()].filter(
      (line) => line <= point.lastAcceptedLine,
    ).length;
    expect(point.acceptedMessages).toBe(acceptedFirst);
    expect(proxy.forwardedOk).toBe(3);
    expect((await readSourceMessages(t, source)).size).toBe(acceptedFirst);

    const duplicatesBefore = counters().duplicates;
    const rerun = await importFile(source, history.file, [
      '--batch-size',
      '200',
      '--resume-file',
      resumeFile,
    ]);
    expect(rerun.summary).toMatchObject({
      status: 'completed',
      resumedAfterLine: point.lastAcceptedLine,
      linesRead: 2000 - point.lastAcceptedLine,
    });
    expect(rerun.summary.accepted).toBe(history.validIds.size - acceptedFirst);
    expect(counters().duplicates).toBe(duplicatesBefore);
    const stored = await readSourceMessages(t, source);
    expect(stored.size).toBe(history.validIds.size);
    expect(new Set([...stored.values()].map(lineOf))).toEqual(new Set(history.validIds.keys()));
  }, 60_000);

  it('interrupted in-process (Ctrl-C) finishes the batch in flight, exits 130, and the rerun continues', async () => {
    const source = await createWorkspaceAndSource(t);
    const history = writeHistory('interrupted', 1500);
    const interrupt = new AbortController();
    const proxy = await startFaultyProxy(t.baseUrl, () => 'forward');
    proxy.onRequest = (index) => {
      if (index === 2) interrupt.abort(); // while the second batch is on its way
    };
    let first;
    try {
      first = await importFile(source, history.file, ['--batch-size', '100'], {
        url: proxy.url,
        interrupt: interrupt.signal,
      });
    } finally {
      await proxy.close();
    }
    expect(first.code).toBe(130);
    expect(first.summary.status).toBe('interrupted');
    // The batch in flight was answered and counted; the one being read when it stopped was sent too.
    expect(first.summary.batches).toBe(proxy.requests);
    expect(first.summary.lastAcceptedLine).toBeGreaterThan(0);
    expect(first.summary.lastAcceptedLine).toBeLessThan(1500);

    const duplicatesBefore = counters().duplicates;
    const rerun = await importFile(source, history.file, ['--batch-size', '100']);
    expect(rerun.summary).toMatchObject({
      status: 'completed',
      resumedAfterLine: first.summary.lastAcceptedLine,
    });
    expect(first.summary.accepted + rerun.summary.accepted).toBe(history.validIds.size);
    expect(counters().duplicates).toBe(duplicatesBefore);
    expect((await readSourceMessages(t, source)).size).toBe(history.validIds.size);
  }, 60_000);

  it('retries 503, 429 with Retry-After, a cut connection and a lost answer, and stores every message once', async () => {
    const source = await createWorkspaceAndSource(t);
    const history = writeHistory('retried', 1000);
    const plan = new Map<number, ReturnType<Parameters<typeof startFaultyProxy>[1]>>([
      [
        1,
        {
          status: 503,
          headers: { 'retry-after': '0' },
          body: { success: false, code: 'unavailable', message: 'log down', error: 'log down' },
        },
      ],
      [
        2,
        {
          status: 429,
          headers: { 'retry-after': '1' },
          body: { success: false, code: 'rate_limited', message: 'slow down', error: 'slow down' },
        },
      ],
      [3, 'destroy'],
      [4, 'forward-then-fail'], // the server stored it; the client must retry, the server dedupes
      [7, { status: 502, body: 'bad gateway' }],
    ]);
    const proxy = await startFaultyProxy(t.baseUrl, (index) => plan.get(index) ?? 'forward');
    const started = Date.now();
    let run;
    try {
      run = await importFile(source, history.file, ['--batch-size', '300', '--retry-base-ms', '10'], {
        url: proxy.url,
      });
    } finally {
      await proxy.close();
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // the 429's Retry-After: 1 was honoured
    expect(run.code).toBe(2); // the generated history holds bad lines
    expect(run.summary).toMatchObject({
      status: 'completed',
      accepted: history.validIds.size,
      retriedBatches: 2,
      retries: 5,
      batches: 4,
    });
    expect(run.stderr).toMatch(/lines 1-\d+: HTTP 503 unavailable: log down; retry 1 in 0\.0 s/);
    expect(run.stderr).toMatch(/HTTP 429 rate_limited: slow down; retry 2 in 1\.0 s/);
    expect(run.stderr).toMatch(/network: /);
    const stored = await readSourceMessages(t, source);
    expect(stored.size).toBe(history.validIds.size);
  }, 60_000);

  it('treats a 4xx as final for its batch: reported with its lines, the rest imported; gives up after --max-retries', async () => {
    const source = await createWorkspaceAndSource(t);
    const history = writeHistory('refused', 600);
    const proxy = await startFaultyProxy(t.baseUrl, (index) =>
      index === 2
        ? {
            status: 400,
            body: { success: false, code: 'payload_too_large', message: 'too big', error: 'too big' },
          }
        : 'forward',
    );
    let run;
    try {
      run = await importFile(source, history.file, ['--batch-size', '200'], { url: proxy.url });
    } finally {
      await proxy.close();
    }
    expect(run.code).toBe(2);
    expect(run.summary.refusedBatches).toEqual([
      {
        firstLine: expect.any(Number),
        lastLine: expect.any(Number),
        messages: 200,
        status: 400,
        code: 'payload_too_large',
        message: 'too big',
      },
    ]);
    expect(run.summary.refusedMessages).toBe(200);
    expect(run.summary.retriedBatches).toBe(0);
    expect(run.summary.lastAcceptedLine).toBe(600);
    const [refused] = run.summary.refusedBatches;
    const stored = await readSourceMessages(t, source);
    const refusedLines = [...history.validIds.keys()].filter(
      (line) => line >= refused.firstLine && line <= refused.lastLine,
    );
    expect(stored.size).toBe(history.validIds.size - refusedLines.length);

    const readable = await runCliInProcess(
      [
        'import',
        history.file,
        '--write-key',
        source.writeKey,
        '--restart',
        '--max-retries',
        '2',
        '--retry-base-ms',
        '1',
      ],
      {
        env: { TRIBUTARY_URL: 'http://127.0.0.1:9' },
      },
    );
    expect(readable.code).toBe(3);
    expect(readable.stdout).toMatch(/^status: +aborted: batch of lines 1-\d+: network: /m);
    expect(readable.stdout).toMatch(/^batches retried: +1 \(2 retries\)$/m);
    expect(readable.stdout).toContain('Run the same command again to continue after the resume point.');
  }, 60_000);
});
