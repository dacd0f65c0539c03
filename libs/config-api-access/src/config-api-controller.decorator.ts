import { applyDecorators, Controller, UseFilters, UseGuards } from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ConfigApiAuthGuard } from './auth.guard';
import { RequestBodyLimitsGuard } from './request-body-limits.guard';
import { ConfigApiErrorFilter } from './config-api-error.filter';

/**
 * Every success of the Config API is 200 with a JSON body, creates included (docs/tracking-api.md §5.1: C1
 * accepts only 200 and 201, grpc-gateway answers 200), so Nest's 201 default for POST is replaced.
 */
function RespondOkOnSuccess(): ClassDecorator {
  return (target) => {
    for (const key of Object.getOwnPropertyNames(target.prototype)) {
      const handler = target.prototype[key];
      if (key !== 'constructor' && typeof handler === 'function')
        Reflect.defineMetadata(HTTP_CODE_METADATA, 200, handler);
    }
  };
}

/**
 * A Config API controller: under its path, authenticated, its request bodies capped, answering errors in
 * `{error, code}`.
 */
export function ConfigApiController(path: string) {
  return applyDecorators(
    Controller(path),
    UseGuards(ConfigApiAuthGuard, RequestBodyLimitsGuard),
    UseFilters(ConfigApiErrorFilter),
    RespondOkOnSuccess(),
    ApiBearerAuth(),
  );
}
