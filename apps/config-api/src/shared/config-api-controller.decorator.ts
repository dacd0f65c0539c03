import { applyDecorators, Controller, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ConfigApiAuthGuard } from './auth.guard';
import { ConfigApiErrorFilter } from './error.filter';

/** A Config API controller: under its path, authenticated, and answering errors in `{error, code}`. */
export function ConfigApiController(path: string) {
  return applyDecorators(
    Controller(path),
    UseGuards(ConfigApiAuthGuard),
    UseFilters(ConfigApiErrorFilter),
    ApiBearerAuth(),
  );
}
