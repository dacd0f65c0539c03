import { randomUUID } from 'node:crypto';
import { Body, Inject, Post, Query, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ConfigApiController, ConfigApiError, GrpcCode, WorkspaceInPath } from '@tributary/config-api-access';
import type { WorkspaceRecord } from '@tributary/config-domain';
import {
  FUNCTION_RUNNER,
  MESSAGE_HANDLERS,
  type FunctionEntry,
  type FunctionHttpRequest,
  type FunctionKind,
  type FunctionResult,
  type FunctionRunner,
} from '@tributary/functions';
import type { FastifyRequest } from 'fastify';

const KINDS: readonly FunctionKind[] = ['SOURCE', 'DESTINATION', 'INSERT_DESTINATION'];

/** What `POST .../functions/preview` answers (docs/functions.md, the shape Segment's clients read). */
export interface FunctionPreviewAnswer {
  invoke: { success: boolean; output: string; error_reason: string | null };
  logs: Array<{ message: string; created_at: string }>;
  logs_truncated: boolean;
  session_id: string;
}

/** The preview's input, checked: what to run and what to run it on. */
interface PreviewInput {
  code: string;
  entry: FunctionEntry;
  payload: FunctionHttpRequest | Record<string, unknown>;
  settings: Record<string, unknown>;
  sessionId: string;
}

/**
 * `POST /workspaces/{ws}/functions/preview?type=SOURCE|DESTINATION|INSERT_DESTINATION`: runs code that
 * need not be saved once, through the process's function runner, on a sample payload, and answers
 * what it returned or emitted, why it failed and what it logged. Nothing is stored, nothing is
 * delivered: a source function's messages are shown, not ingested.
 *
 * Each preview runs as a version of its own (a fresh function id per request), so an edit never
 * runs a stale compiled copy and two workspaces never share an isolate. Like a destination's
 * authentication test, it is work the tenant chooses and the instance performs: one preview at a
 * time per workspace (another answers 429 while one is under way), on top of the Config API's rate
 * limit, and the runner's own time and memory limits bound each one.
 */
@ApiTags('functions')
@ConfigApiController('v1beta/workspaces/:workspace/functions')
export class FunctionPreviewController {
  /** Workspaces with a preview under way: one at a time each. */
  private readonly previewsUnderWay = new Set<string>();

  constructor(@Inject(FUNCTION_RUNNER) private readonly runner: FunctionRunner) {}

  @Post('preview')
  async preview(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @Query('type') type: unknown,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
  ): Promise<FunctionPreviewAnswer> {
    const kind = kindOf(type);
    const input = previewInputOf(kind, body, sourceFunctionUrlOf(request));
    if (this.previewsUnderWay.has(workspace.slug)) {
      throw new ConfigApiError(
        429,
        GrpcCode.RESOURCE_EXHAUSTED,
        'a function preview of this workspace is under way; retry when it has answered',
        { 'retry-after': '1' },
      );
    }
    this.previewsUnderWay.add(workspace.slug);
    try {
      const check = await this.runner.check(kind, input.code);
      if (!check.ok) throw ConfigApiError.invalidArgument(`function.code: ${check.message}`);
      const result = await this.runner.invoke({
        fn: {
          workspaceId: workspace.id,
          functionId: `preview_${randomUUID()}`,
          version: 1,
          kind,
          code: input.code,
          // Never kept: each preview is code of its own, run once.
          once: true,
        },
        entry: input.entry,
        payload: input.payload,
        settings: input.settings,
        context: { invocationId: input.sessionId },
      });
      if (result.status === 'unavailable') {
        throw new ConfigApiError(
          503,
          GrpcCode.UNAVAILABLE,
          `the function runner could not run it: ${result.reason}`,
          {
            'retry-after': '1',
          },
        );
      }
      return presentPreview(kind, input, result);
    } finally {
      this.previewsUnderWay.delete(workspace.slug);
    }
  }
}

function kindOf(type: unknown): FunctionKind {
  const kind = typeof type === 'string' ? type.toUpperCase() : '';
  if (!(KINDS as readonly string[]).includes(kind)) {
    throw ConfigApiError.invalidArgument(`type must be one of ${KINDS.join(', ')}`);
  }
  return kind as FunctionKind;
}

/**
 * Checks the body, `{"function":{"code","settings"},"payload":"<JSON text>","settings":{name:value},
 * "session_id"?}`, and turns the payload into the entry's argument: for a source function the body
 * of a POST to its webhook, for the others a message, whose `type` names the handler that runs.
 */
function previewInputOf(kind: FunctionKind, body: unknown, webhookUrl: string): PreviewInput {
  if (!isObject(body)) throw ConfigApiError.invalidArgument('the body must be a JSON object');
  const fn = body.function;
  if (!isObject(fn) || typeof fn.code !== 'string' || fn.code.trim() === '') {
    throw ConfigApiError.invalidArgument('function.code must be the code to run, a non-empty string');
  }
  if (fn.settings !== undefined && fn.settings !== null && !Array.isArray(fn.settings)) {
    throw ConfigApiError.invalidArgument('function.settings must be a list of setting declarations');
  }
  const settings = body.settings ?? {};
  if (!isObject(settings)) {
    throw ConfigApiError.invalidArgument('settings must be an object of setting names to values');
  }
  if (
    body.session_id !== undefined &&
    (typeof body.session_id !== 'string' || body.session_id.length > 128)
  ) {
    throw ConfigApiError.invalidArgument('session_id must be a string of at most 128 characters');
  }
  const sessionId =
    typeof body.session_id === 'string' && body.session_id !== '' ? body.session_id : randomUUID();
  if (typeof body.payload !== 'string') {
    throw ConfigApiError.invalidArgument('payload must be the sample as JSON text (a string)');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.payload);
  } catch (error) {
    throw ConfigApiError.invalidArgument(`payload is not valid JSON: ${(error as Error).message}`);
  }
  if (kind === 'SOURCE') {
    return {
      code: fn.code,
      entry: 'onRequest',
      payload: {
        method: 'POST',
        url: webhookUrl,
        headers: { 'content-type': 'application/json' },
        body: body.payload,
      } satisfies FunctionHttpRequest,
      settings,
      sessionId,
    };
  }
  if (!isObject(parsed)) throw ConfigApiError.invalidArgument('payload must be one message, a JSON object');
  const handler =
    typeof parsed.type === 'string' && Object.hasOwn(MESSAGE_HANDLERS, parsed.type)
      ? MESSAGE_HANDLERS[parsed.type as keyof typeof MESSAGE_HANDLERS]
      : undefined;
  if (!handler) {
    throw ConfigApiError.invalidArgument(
      `payload.type must be one of ${Object.keys(MESSAGE_HANDLERS).join(', ')}`,
    );
  }
  return { code: fn.code, entry: handler, payload: parsed, settings, sessionId };
}

/**
 * The answer: `output` is the JSON text of what the handler returned (destination, insert) or of the
 * messages emitted (source); `error_reason` the reason the router would record for a failure.
 */
export function presentPreview(
  kind: FunctionKind,
  input: Pick<PreviewInput, 'entry' | 'sessionId'>,
  result: FunctionResult,
): FunctionPreviewAnswer {
  const invoke = ((): FunctionPreviewAnswer['invoke'] => {
    switch (result.status) {
      case 'resolved':
        return {
          success: true,
          output:
            kind === 'SOURCE'
              ? JSON.stringify(result.emitted ?? [])
              : (JSON.stringify(result.value ?? null) ?? 'null'),
          error_reason: null,
        };
      case 'no_handler':
        // An insert function without the handler drops the message; a destination function filters it.
        return {
          success: false,
          output: 'null',
          error_reason:
            kind === 'INSERT_DESTINATION'
              ? `insert_function: dropped (no ${input.entry} handler)`
              : `EventNotSupported: no ${input.entry} handler`,
        };
      case 'threw':
        return { success: false, output: 'null', error_reason: `${result.name}: ${result.message}` };
      case 'timeout':
        return {
          success: false,
          output: 'null',
          error_reason: `function_timeout: exceeded ${result.limitMs} ms`,
        };
      case 'memory_exceeded':
        return { success: false, output: 'null', error_reason: 'function_memory_exceeded' };
      case 'unavailable':
        return { success: false, output: 'null', error_reason: `unavailable: ${result.reason}` };
    }
  })();
  const logs = result.logs.map((line) => ({ message: line.message, created_at: line.time }));
  return { invoke, logs, logs_truncated: result.logsDropped > 0, session_id: input.sessionId };
}

/** Where the source function's webhook would be: the request's own scheme and host. */
function sourceFunctionUrlOf(request: FastifyRequest): string {
  const host = request.headers.host ?? 'localhost';
  return `${request.protocol}://${host}/v1/fn?b=preview`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
