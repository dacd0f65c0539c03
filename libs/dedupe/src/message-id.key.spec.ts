import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { KEY_BYTES, messageIdKeys } from './message-id.key';

describe('message id keys', () => {
  it('are the first 16 bytes of the SHA-256 of the id in UTF-8, as the index files on disk hold them', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 100 }), { maxLength: 20 }),
        (messageIds) => {
          const keys = messageIdKeys(messageIds);
          expect(keys).toHaveLength(messageIds.length * KEY_BYTES);
          messageIds.forEach((messageId, index) => {
            const expected = createHash('sha256')
              .update(Buffer.from(messageId, 'utf8'))
              .digest()
              .subarray(0, KEY_BYTES);
            expect(keys.subarray(index * KEY_BYTES, (index + 1) * KEY_BYTES)).toEqual(expected);
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});
