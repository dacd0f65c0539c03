// Rotating the deployment key: destination secrets written under the old key still reach the
// destination after the restart with TRIBUTARY_SECRET_KEY set to a new key and the old one in
// TRIBUTARY_PREVIOUS_SECRET_KEYS; new secrets are written under the new key.
import { randomBytes, randomUUID } from 'node:crypto';
import { generateAccessTokenSecret, secretKeyId } from '@tributary/auth';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWorkspaceAndSource, postJson, pollUntil } from '../../../test/support/tracking-e2e.kit';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { createWebhookDestination, POLLING_ENVIRONMENT, WebhookReceiver } from './router-e2e.kit';
import { SQLITE_EVENT_STORE_FILE } from '@tributary/event-store';
import { Database } from '@tributary/sqlite';

jest.setTimeout(120_000);

const track = () => ({ type: 'track', userId: 'u-1', event: 'Rotated', messageId: randomUUID() });

describe('TRIBUTARY_SECRET_KEY rotation', () => {
  let dataDir: string;
  let t: TributaryTestInstance | undefined;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tributary-key-rotation-'));
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps delivering with secrets stored under the previous key', async () => {
    const oldKey = randomBytes(32).toString('hex');
    const newKey = randomBytes(32).toString('hex');
    const adminToken = generateAccessTokenSecret();
    const sharedSecret = `whsec-${randomUUID()}`;
    receiver = await WebhookReceiver.start({ secret: sharedSecret });

    t = await startTributary({
      dataDir,
      adminToken,
      environment: { ...POLLING_ENVIRONMENT, TRIBUTARY_SECRET_KEY: oldKey },
    });
    const source = await createWorkspaceAndSource(t);
    await createWebhookDestination(t, source, 'webhooks', receiver, sharedSecret);
    expect((await postJson(t, '/v1/track', track(), source.writeKey)).status).toBe(200);
    await pollUntil('the first message is delivered', 20_000, async () =>
      receiver.accepted().length >= 1 ? true : undefined,
    );
    await t.stop();

    t = await startTributary({
      dataDir,
      adminToken,
      environment: {
        ...POLLING_ENVIRONMENT,
        TRIBUTARY_SECRET_KEY: newKey,
        TRIBUTARY_PREVIOUS_SECRET_KEYS: oldKey,
      },
    });
    expect((await postJson(t, '/v1/track', track(), source.writeKey)).status).toBe(200);
    await pollUntil('the message after the rotation is delivered', 30_000, async () =>
      receiver.accepted().length >= 2 ? true : undefined,
    );
    // Signed with the secret decrypted by the previous key: the receiver checks each signature.
    expect(receiver.accepted().map((request) => request.signatureValid)).toEqual([true, true]);

    // A secret written now is stored under the new key's id.
    const other = await WebhookReceiver.start({ secret: 'after-rotation' });
    try {
      await createWebhookDestination(t, source, 'webhooks-2', other, 'after-rotation');
    } finally {
      await other.close();
    }
    const stored = await storedSecrets(dataDir);
    expect(stored.some((value) => value.includes(`:${secretKeyId(Buffer.from(newKey, 'hex'))}:`))).toBe(true);
    expect(stored.some((value) => value.includes(`:${secretKeyId(Buffer.from(oldKey, 'hex'))}:`))).toBe(true);
  });
});

/** Every encrypted value in the config events, as stored (read straight from the SQLite store). */
async function storedSecrets(dataDir: string): Promise<string[]> {
  const database = new Database(join(dataDir, SQLITE_EVENT_STORE_FILE), { readonly: true });
  try {
    const rows = database.prepare('SELECT data FROM events').all() as { data: string }[];
    return rows.flatMap((row) => row.data.match(/enc:v1:[0-9a-f]{8}:[A-Za-z0-9_-]+/g) ?? []);
  } finally {
    database.close();
  }
}
