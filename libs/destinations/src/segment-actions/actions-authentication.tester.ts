/**
 * `POST .../destinations/{dst}:test`: runs an Actions destination's own `testAuthentication` with its
 * stored settings, through the same egress guard, agents and timeouts as deliveries.
 */
import { SUBSCRIPTIONS_SETTING, findActionsDestination } from './actions-catalog.entries';
import { contactedHosts } from './actions-destination.loader';
import { HIDDEN_ANSWER, MAX_ACTIONS_RESPONSE_BYTES } from './actions-error.classifier';
import { SegmentActionsRuntime, type SegmentActionsRuntimeOptions } from './segment-actions.adapter';

export type AuthenticationTestResult =
  | { readonly status: 'OK' }
  | { readonly status: 'FAILED'; readonly message: string }
  | { readonly status: 'UNSUPPORTED'; readonly message: string };

const MAX_MESSAGE_CHARS = 300;

export class ActionsAuthenticationTester {
  private runtime: SegmentActionsRuntime | undefined;

  constructor(private readonly options: SegmentActionsRuntimeOptions = {}) {}

  /** `undefined` when `catalogSlug` is not an Actions destination. Never rejects. */
  async test(
    catalogSlug: string,
    settings: Readonly<Record<string, unknown>>,
  ): Promise<AuthenticationTestResult | undefined> {
    const data = findActionsDestination(catalogSlug);
    if (!data) return undefined;
    if (!data.hasTestAuthentication) {
      return { status: 'UNSUPPORTED', message: `${data.name} has no authentication test` };
    }
    this.runtime ??= new SegmentActionsRuntime(this.options);
    const { [SUBSCRIPTIONS_SETTING]: _subscriptions, ...rest } = settings;
    const destinationSettings = Object.fromEntries(
      Object.entries(rest).filter(([, value]) => value !== '' && value !== null),
    );
    const secrets = data.settings
      .filter((setting) => setting.type === 'password')
      .map((setting) => rest[setting.key])
      .filter((value): value is string => typeof value === 'string' && value !== '');
    const runtime = this.runtime;
    const hosts = new Set<string>();
    try {
      await contactedHosts().run(hosts, () =>
        withTimeout(
          runtime.destination(data).testAuthentication(destinationSettings),
          runtime.messageTimeoutMs,
        ),
      );
      return { status: 'OK' };
    } catch (error) {
      // Destinations quote the answers they got (`voiceops` returns its body's `message`): an internal
      // address's answer is reduced to its status.
      const message = isOverSizeCap(error)
        ? `the response is larger than the ${MAX_ACTIONS_RESPONSE_BYTES} bytes an action may read`
        : runtime.mayShowAnswersOf(hosts)
          ? describe(error)
          : describeHidden(error);
      return { status: 'FAILED', message: redacted(message, secrets) };
    }
  }

  close(): void {
    this.runtime?.close();
    this.runtime = undefined;
  }
}

/**
 * node-fetch's error for a body past its `size`. actions-core rethrows a test's failure as a plain
 * `Error` (`Credentials are invalid: <status> <message>`), so only the message tells.
 */
function isOverSizeCap(error: unknown): boolean {
  const { type, message } = (error ?? {}) as { type?: unknown; message?: unknown };
  return type === 'max-size' || (typeof message === 'string' && / over limit: \d+$/.test(message));
}

/** The failure without what the host answered: `Credentials are invalid: HTTP 401`, or the kind of error. */
function describeHidden(error: unknown): string {
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  const wrapped = typeof message === 'string' ? /^Credentials are invalid: (\d{3})? /.exec(message) : null;
  const kind = wrapped
    ? `Credentials are invalid${wrapped[1] ? `: HTTP ${wrapped[1]}` : ''}`
    : typeof name === 'string'
      ? name
      : 'Error';
  return `${kind} (${HIDDEN_ANSWER})`;
}

function describe(error: unknown): string {
  const { message, response } = (error ?? {}) as { message?: unknown; response?: { status?: unknown } };
  const text = typeof message === 'string' ? message : String(error);
  const line = text.replace(/\s+/g, ' ').trim();
  const status = typeof response?.status === 'number' ? `HTTP ${response.status}: ` : '';
  const full = `${status}${line}`;
  return full.length > MAX_MESSAGE_CHARS ? `${full.slice(0, MAX_MESSAGE_CHARS)}…` : full;
}

/** A vendor's error may quote the key it refused; the answer never does. */
function redacted(text: string, secrets: readonly string[]): string {
  return secrets.reduce((result, secret) => result.split(secret).join('********'), text);
}

function withTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
