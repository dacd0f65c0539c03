import {
  ChangeMetadata,
  ConfigApiController,
  DestinationInPath,
  ResourceLookup,
} from '@tributary/config-api-access';
import { Body, Delete, Get, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { DestinationRecord } from '@tributary/config-domain';
import { DestinationView } from '@tributary/config-projections';
import { InsertFunctionRequestSchema } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { DestinationCatalog } from '../destinations/destination-catalog';
import { InsertFunctionCommands, requireInsertFunction } from './insert-function.commands';
import { presentInsertFunction } from './insert-function.presenter';

class InsertFunctionRequestDto extends createZodDto(InsertFunctionRequestSchema) {}

/**
 * A destination's insert function over HTTP (docs/functions.md §1 "Instances"): at most one per
 * destination, named by its function id; what a change does is `InsertFunctionCommands`'.
 */
@ApiTags('insert functions')
@ConfigApiController(
  'v1beta/workspaces/:workspace/sources/:source/destinations/:destination/insert-functions',
)
export class InsertFunctionsController {
  constructor(
    private readonly insertFunctions: InsertFunctionCommands,
    private readonly catalog: DestinationCatalog,
    private readonly lookup: ResourceLookup,
  ) {}

  @Get()
  list(@DestinationInPath() { destination }: DestinationView) {
    const { insertFunction } = destination;
    return {
      insert_functions: insertFunction ? [this.present(destination, insertFunction.functionId)] : [],
      next_page_token: '',
    };
  }

  @Post()
  async create(
    @DestinationInPath() { destination }: DestinationView,
    @Body() body: InsertFunctionRequestDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { function_id: functionId, enabled, config } = body.insert_function;
    await this.insertFunctions.create(destination, { functionId, enabled, config }, metadata);
    return this.present(this.reread(destination), functionId!);
  }

  @Get(':insertFunction')
  get(@DestinationInPath() { destination }: DestinationView, @Param('insertFunction') functionId: string) {
    return this.present(destination, functionId);
  }

  @Patch(':insertFunction')
  async update(
    @DestinationInPath() { destination }: DestinationView,
    @Param('insertFunction') functionId: string,
    @Body() body: InsertFunctionRequestDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.insertFunctions.update(destination, functionId, body, metadata);
    return this.present(this.reread(destination), functionId);
  }

  @Put(':insertFunction')
  replace(
    @DestinationInPath() view: DestinationView,
    @Param('insertFunction') functionId: string,
    @Body() body: InsertFunctionRequestDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(view, functionId, body, metadata);
  }

  @Delete(':insertFunction')
  async delete(
    @DestinationInPath() { destination }: DestinationView,
    @Param('insertFunction') functionId: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.insertFunctions.delete(destination, functionId, metadata);
    return {};
  }

  private present(destination: DestinationRecord, functionId: string) {
    const insertFunction = requireInsertFunction(destination, functionId);
    return presentInsertFunction(
      destination,
      insertFunction,
      this.catalog.functionEntry(destination.workspaceSlug, functionId, 'INSERT_DESTINATION'),
    );
  }

  private reread(destination: DestinationRecord): DestinationRecord {
    const { workspaceSlug, sourceSlug, destinationSlug } = destination;
    return this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug).destination;
  }
}
