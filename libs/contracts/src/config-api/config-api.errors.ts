import { z } from 'zod';

/** `{"error": "...", "code": N}`; `message` duplicates `error` as grpc-gateway does (docs/config-api.md §4). */
export const ConfigApiErrorBodySchema = z.object({
  error: z.string(),
  code: z.number().int(),
  message: z.string().optional(),
});
export type ConfigApiErrorBody = z.infer<typeof ConfigApiErrorBodySchema>;
