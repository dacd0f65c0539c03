import { Injectable } from '@nestjs/common';
import { SecretBox } from '@tributary/auth';
import { sourceFunctionSecretsOwner, type SourceRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { sourceName } from '@tributary/contracts';
import {
  decideSourceAnswer,
  type EmittedMessage,
  FunctionInvoker,
  type FunctionVersion,
} from '@tributary/functions';
import { IngestMessagesHandler } from '../ingest-messages/ingest-messages.handler';
import { TrackingApiError } from '../shared/tracking-api.error';

/** The largest request body a source function is given (docs/functions.md §2, §4). */
export const MAX_SOURCE_FUNCTION_BODY_BYTES = 512 * 1024;
/** The most messages one invocation may emit. */
export const MAX_EMITTED_MESSAGES = 500;

/** A POST to a source function's webhook URL, as the controller read it. */
export interface SourceFunctionRequest {
  /** The `b` query parameter: the base64url of one of the source's write keys. */
  b: unknown;
  /** The full URL, query string included. */
  url: string;
  method: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer;
}

export interface SourceFunctionAnswer {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/**
 * `POST /v1/fn?b=<write key>`: runs the source's function on the request, then stores what it emitted
 * through the tracking API's own batch path with the source's write key (validation, messageId,
 * dedupe, Protocols, suppression, rate limit), before answering: the caller learns the outcome and
 * retries on a 503, which dedupe makes safe for messages that carry their own messageId.
 */
@Injectable()
export class SourceFunctionHandler {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly secretBox: SecretBox,
    private readonly functions: FunctionInvoker,
    private readonly ingest: IngestMessagesHandler,
  ) {}

  async handle(request: SourceFunctionRequest): Promise<SourceFunctionAnswer> {
    const writeKey = writeKeyOf(request.b);
    const source = writeKey === undefined ? undefined : this.readModel.sourceByWriteKey(writeKey);
    const fn = source && this.deployedFunctionOf(source);
    if (!source || !fn || writeKey === undefined) {
      return { status: 404, body: { error: 'no source function answers at this URL' } };
    }
    if (request.body.length > MAX_SOURCE_FUNCTION_BODY_BYTES) {
      return {
        status: 413,
        body: {
          error: `the request body is ${request.body.length} bytes; a source function takes at most ${MAX_SOURCE_FUNCTION_BODY_BYTES}`,
        },
      };
    }

    const result = await this.functions.invoke({
      fn,
      entry: 'onRequest',
      payload: {
        method: request.method,
        url: request.url,
        headers: plainHeaders(request.headers),
        body: request.body.toString('utf8'),
      },
      settings: this.secretBox.revealAll(source.functionConfig ?? {}, sourceFunctionSecretsOwner(source)),
      instance: sourceName(source),
    });
    const answer = decideSourceAnswer(result);
    if (answer.status !== 200) {
      this.functions.record(fn, result, answer.status === 503 ? 'retried' : 'discarded');
      return { status: answer.status, body: { ...answer.body }, headers: { ...answer.headers } };
    }
    const stored = await this.store(answer.emitted, fn, writeKey);
    this.functions.record(fn, result, stored.status === 200 ? 'success' : 'discarded');
    return stored;
  }

  private async store(
    emitted: readonly EmittedMessage[],
    fn: FunctionVersion,
    writeKey: string,
  ): Promise<SourceFunctionAnswer> {
    if (emitted.length > MAX_EMITTED_MESSAGES) {
      return {
        status: 400,
        body: {
          error: `the function emitted ${emitted.length} messages; at most ${MAX_EMITTED_MESSAGES} are taken`,
        },
      };
    }
    if (emitted.length === 0) return { status: 200, body: { success: true } };
    const sourceFunction = { id: fn.functionId, version: fn.version };
    const batch = emitted.map((message) => ({
      ...message,
      context: { ...contextOf(message), source_function: sourceFunction },
    }));
    try {
      await this.ingest.ingest({
        route: 'batch',
        body: Buffer.from(JSON.stringify({ batch }), 'utf8'),
        authorization: `Basic ${Buffer.from(`${writeKey}:`, 'utf8').toString('base64')}`,
        fromSourceFunction: true,
      });
    } catch (error) {
      if (!(error instanceof TrackingApiError)) throw error;
      // The tracking API's refusal, in this endpoint's shape: a 503 (log unavailable) and a 429
      // (rate limit) keep their Retry-After.
      return { status: error.status, body: { error: error.message }, headers: error.headers };
    }
    return { status: 200, body: { success: true } };
  }

  private deployedFunctionOf(source: SourceRecord): FunctionVersion | undefined {
    if (source.functionId === undefined) return undefined;
    const record = this.readModel.function(source.workspaceSlug, source.functionId)?.function;
    if (!record || record.type !== 'SOURCE') return undefined;
    const deployed = record.versions.find((version) => version.version === record.deployedVersion);
    return (
      deployed && {
        workspaceId: record.workspaceId,
        functionId: record.functionId,
        version: deployed.version,
        kind: 'SOURCE',
        code: deployed.code,
      }
    );
  }
}

/** The write key `b` carries, or undefined when it is missing or not base64url of a plausible key. */
function writeKeyOf(b: unknown): string | undefined {
  if (typeof b !== 'string' || !/^[A-Za-z0-9_-]{1,512}={0,2}$/.test(b)) return undefined;
  const writeKey = Buffer.from(b, 'base64url').toString('utf8');
  return /^[\x21-\x7e]{1,256}$/.test(writeKey) ? writeKey : undefined;
}

function plainHeaders(headers: SourceFunctionRequest['headers']): Record<string, string> {
  const plain: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    plain[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return plain;
}

function contextOf(message: EmittedMessage): Record<string, unknown> {
  const context = message['context'];
  return typeof context === 'object' && context !== null && !Array.isArray(context)
    ? (context as Record<string, unknown>)
    : {};
}
