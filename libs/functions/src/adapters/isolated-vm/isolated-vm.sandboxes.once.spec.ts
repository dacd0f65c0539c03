// A version run `once` (a preview of unsaved code) leaves no isolate behind, while versions run the
// ordinary way stay compiled for the next invocation: real isolates, no lane.
import { EgressGuard, parseEgressPolicy } from '@tributary/destinations';
import type { FunctionInvocation } from '../../function-runner.port';
import { IsolatedVmSandboxes } from './isolated-vm.sandboxes';
import { SandboxFetcher } from './sandbox-fetch';

const invocation = (functionId: string, once?: boolean): FunctionInvocation => ({
  fn: {
    workspaceId: 'ws-1',
    functionId,
    version: 1,
    kind: 'DESTINATION',
    code: 'async function onTrack(event) { return event.event; }',
    ...(once !== undefined && { once }),
  },
  entry: 'onTrack',
  payload: { type: 'track', event: 'Ran' },
  settings: {},
  context: { invocationId: `${functionId}-1` },
});

describe('isolated-vm sandboxes: versions run once', () => {
  const sandboxes = new IsolatedVmSandboxes(
    { timeoutMs: 2_000, memoryMb: 32, maxCodeBytes: 128 * 1024, maxIsolates: 10 },
    new SandboxFetcher(new EgressGuard(parseEgressPolicy('public', '')), 2_000),
  );
  afterAll(() => sandboxes.close());

  const settled = () => new Promise((resolve) => setImmediate(resolve));

  it('disposes the isolate of a version run once, after it answered', async () => {
    const [result] = await sandboxes.invokeAll([invocation('preview_a', true)]);
    expect(result).toMatchObject({ status: 'resolved', value: 'Ran' });
    await settled();
    expect(sandboxes.stats.isolates).toBe(0);
    const [again] = await sandboxes.invokeAll([invocation('preview_b', true)]);
    expect(again).toMatchObject({ status: 'resolved', value: 'Ran' });
    await settled();
    expect(sandboxes.stats).toMatchObject({ isolates: 0, built: 2 });
  });

  it('keeps a version run the ordinary way, and reuses it', async () => {
    await sandboxes.invokeAll([invocation('dfn_kept')]);
    await sandboxes.invokeAll([invocation('dfn_kept')]);
    await settled();
    expect(sandboxes.stats).toMatchObject({ isolates: 1, built: 3 });
  });
});
