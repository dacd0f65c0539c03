/**
 * The `suppression` phase: phase 2 again against a source of a workspace of its own that suppresses
 * BENCH_SUPPRESSED_USERS (10,000) users (source-scoped SUPPRESS_ONLY regulations, 5,000 ids each, the
 * most one regulation takes), alternating with phase 2 in each round. None of the bench messages'
 * users is suppressed, so every message is still stored: what the ratio measures is the check itself
 * (docs/regulations.md, "Suppression at ingest"). A workspace of its own: the check runs for every
 * source of a workspace with any suppression, so phase 2's workspace must have none. Printed as
 * `ratio suppression/ingest`.
 */
import type { ConfigApiClient } from '../support/config-api.client';

const IDS_PER_REGULATION = 5_000;

/** A new workspace `workspace` with a source whose regulations suppress `users` user ids; answers its write key. */
export async function createSuppressingSource(
  api: ConfigApiClient,
  workspace: string,
  sourceSlug: string,
  users: number,
): Promise<string> {
  const call = (method: 'POST' | 'GET', path: string, body?: unknown) => api.ok(method, path, body);
  await call('POST', 'workspaces', {
    workspace: { name: `workspaces/${workspace}`, display_name: 'Bench suppression' },
  });
  const source = await call('POST', `workspaces/${workspace}/sources`, {
    source: { name: sourceSlug, catalog_name: 'node' },
  });
  for (let first = 0; first < users; first += IDS_PER_REGULATION) {
    const values = Array.from(
      { length: Math.min(IDS_PER_REGULATION, users - first) },
      (_, index) => `suppressed-user-${first + index}`,
    );
    await call('POST', `workspaces/${workspace}/sources/${sourceSlug}/regulations`, {
      regulation_type: 'Suppress_Only',
      attributes: { name: 'userId', values },
    });
  }
  // Suppressions are in force once final; wait for all of them.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { regulations } = await call('GET', `workspaces/${workspace}/sources/${sourceSlug}/regulations`);
    if (regulations.length > 0 && regulations.every((regulation: any) => regulation.status === 'finished'))
      break;
    if (Date.now() > deadline)
      throw new Error('suppression phase: the regulations did not finish within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return source.write_keys[0];
}

/**
 * Fails unless a message of a suppressed user sent to the source is answered 200 and dropped, so the
 * phase measures a source where suppression is in force.
 */
export async function assertSuppressionInForce(baseUrl: string, writeKey: string): Promise<void> {
  const response = await fetch(`${baseUrl}/v1/track`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ userId: 'suppressed-user-0', event: 'Bench Suppressed' }),
  });
  if (response.status !== 200)
    throw new Error(`suppression phase: a suppressed user's message got ${response.status}`);
}
