/**
 * Undoes `Content-Encoding` (docs/tracking-api.md §5.1): `gzip` must be inflated (Python's `gzip=True`), `deflate` may be.
 *
 * This is computation over a buffer already in memory, so it belongs in the pure ingest lib. The output
 * is capped: zlib stops as soon as the output would pass `maxBytes` (the gzip-bomb guard, docs/tracking-api.md §8.3), so a
 * tiny body that expands to gigabytes costs at most `maxBytes` of memory.
 */
import { gunzipSync, inflateRawSync, inflateSync, type ZlibOptions } from 'node:zlib';
import { failure, success, type IngestResult } from '../ingest-result';

type Decoder = (input: Buffer, options: ZlibOptions) => Buffer;

/**
 * HTTP `deflate` is meant to be zlib-wrapped, but some clients send raw deflate; try the wrapped form
 * first and fall back only when the header is not a zlib one.
 */
const inflateWrappedOrRaw: Decoder = (input, options) => {
  try {
    return inflateSync(input, options);
  } catch (error) {
    if (
      (error as NodeJS.ErrnoException).code === 'Z_DATA_ERROR' &&
      /header/i.test((error as Error).message)
    ) {
      return inflateRawSync(input, options);
    }
    throw error;
  }
};

const DECODERS: Readonly<Record<string, Decoder | null>> = {
  identity: null,
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateWrappedOrRaw,
};

/**
 * Returns the decoded body, or `payload_too_large` when it is (or would inflate to) more than `maxBytes`,
 * or `invalid_request` for a corrupt body or an unsupported coding. A header listing several codings
 * (`gzip, identity`) is undone from the last applied to the first, as RFC 9110 describes.
 */
export function inflateBody(
  body: Buffer | Uint8Array,
  contentEncoding: string | readonly string[] | undefined,
  maxBytes: number,
): IngestResult<Buffer> {
  const codings = parseContentEncoding(contentEncoding);
  let current = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);

  for (const coding of [...codings].reverse()) {
    if (!Object.hasOwn(DECODERS, coding)) {
      return failure(
        'invalid_request',
        `Unsupported Content-Encoding "${coding}"; send gzip, deflate or an uncompressed body`,
      );
    }
    const decoder = DECODERS[coding];
    if (decoder === null) continue;
    try {
      current = decoder(current, { maxOutputLength: maxBytes });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        return failure('payload_too_large', `Request body is larger than ${maxBytes} bytes once inflated`);
      }
      return failure(
        'invalid_request',
        `Request body is not valid ${coding} data: ${(error as Error).message}`,
      );
    }
  }

  if (current.length > maxBytes) {
    return failure('payload_too_large', `Request body is larger than ${maxBytes} bytes`);
  }
  return success(current);
}

/** `"GZip , identity"` -> `['gzip', 'identity']`; an absent or blank header means no coding. */
function parseContentEncoding(header: string | readonly string[] | undefined): string[] {
  const values = header === undefined ? [] : typeof header === 'string' ? [header] : header;
  return values
    .flatMap((value) => value.split(','))
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding.length > 0);
}
