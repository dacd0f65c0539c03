import { z } from 'zod';
import { ConfigEntryRequestSchema, UpdateMaskSchema } from './config-api.requests';

/**
 * Request bodies of function instances on the Config API (docs/functions.md §1 "Instances"): an insert
 * function on a destination, and the function config of a source function. Loose like every request
 * body: clients echo read-only fields.
 */
export const InsertFunctionBodySchema = z.looseObject({
  /** `ifnd_…`: one of the workspace's INSERT_DESTINATION functions. Required on create. */
  function_id: z.string().nullish(),
  enabled: z.boolean().nullish(),
  config: z.array(ConfigEntryRequestSchema).nullish(),
});

export const InsertFunctionRequestSchema = z.looseObject({
  insert_function: InsertFunctionBodySchema,
  update_mask: UpdateMaskSchema,
});

export type InsertFunctionRequest = z.infer<typeof InsertFunctionRequestSchema>;
