import { Body, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { NormalizedMessage } from '@tributary/contracts';
import {
  applyDestinationFilters,
  compileFilterActions,
  compileFilterCondition,
  InvalidDestinationFilterError,
  type FilterActionInput,
} from '@tributary/routing';
import { ConfigApiController, ConfigApiError } from '@tributary/config-api-access';

const MAX_PREVIEW_INPUT_BYTES = 32 * 1024;

/**
 * `POST /filters/preview` (docs/config-api.md §2.6, body `{filter, input}` with the event as a JSON string): runs
 * one filter over a sample event exactly as the router would, and answers what comes out. The
 * response shape is Tributary's own (no source shows Segment's): `result` is `pass` (with `output`,
 * the event as the destination would get it) or the reason the event is held back.
 */
@ApiTags('filters')
@ConfigApiController('v1beta/filters/preview')
export class FilterPreviewController {
  @Post()
  preview(@Body() body: unknown) {
    const { filter, input } = (body ?? {}) as { filter?: Record<string, unknown>; input?: unknown };
    if (!filter || typeof filter !== 'object' || Array.isArray(filter)) {
      throw ConfigApiError.invalidArgument('filter must be an object with `if` and `actions`');
    }
    if (typeof input !== 'string')
      throw ConfigApiError.invalidArgument('input must be the event as a JSON string');
    if (Buffer.byteLength(input) > MAX_PREVIEW_INPUT_BYTES) {
      throw ConfigApiError.invalidArgument(`input must be at most ${MAX_PREVIEW_INPUT_BYTES} bytes`);
    }
    let event: unknown;
    try {
      event = JSON.parse(input);
    } catch (error) {
      throw ConfigApiError.invalidArgument(`input is not valid JSON: ${(error as Error).message}`);
    }
    if (!event || typeof event !== 'object' || Array.isArray(event)) {
      throw ConfigApiError.invalidArgument('input must be a JSON object (one event)');
    }
    const condition = typeof filter.if === 'string' && filter.if.trim() !== '' ? filter.if : 'all';
    const actions = Array.isArray(filter.actions) ? (filter.actions as FilterActionInput[]) : [];
    try {
      compileFilterCondition(condition);
      compileFilterActions(actions);
    } catch (error) {
      if (error instanceof InvalidDestinationFilterError) {
        throw ConfigApiError.invalidArgument(`filter.${error.field}: ${error.message}`);
      }
      throw error;
    }
    const result = applyDestinationFilters(event as NormalizedMessage, [
      { filterId: 'preview', title: 'preview', if: condition, enabled: true, actions },
    ]);
    return result.outcome === 'pass'
      ? { result: 'pass', output: JSON.stringify(result.message) }
      : { result: result.reason, output: null };
  }
}
