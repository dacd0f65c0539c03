/**
 * Request bodies exactly as the official clients send them (docs/tracking-api.md §5.2, §6.2), for the tests.
 * The Node body was captured from @segment/analytics-node 3.1.0 posting to a local server, with its times
 * and ids replaced by fixed ones; the Python and Ruby bodies follow the shapes the spec documents.
 */

/** analytics-python 2.3.4: spaces after `,` and `:`, `\uXXXX` escapes, unset fields as null, writeKey in the body. */
export const PYTHON_2_3_BATCH_BODY =
  '{"batch": [' +
  '{"integrations": {}, "anonymousId": null, "properties": {"revenue": 9.99, "coupon": null, "city": "M\\u00fcnchen"}, ' +
  '"timestamp": "2026-11-25T21:15:05.320+00:00", "context": {"library": {"name": "analytics-python", "version": "2.3.4"}}, ' +
  '"userId": "u1", "type": "track", "event": "Order Completed", "messageId": "0b7c9d1e-6a0f-4b8e-9a57-2f3d4c5b6a71"}, ' +
  '{"integrations": {}, "anonymousId": "a1", "properties": {}, "timestamp": "2026-11-25T21:15:05.321+00:00", ' +
  '"context": {"library": {"name": "analytics-python", "version": "2.3.4"}}, "userId": null, "type": "page", ' +
  '"name": null, "category": null, "messageId": "1c8d0e2f-7b10-4c9f-8b68-3e4d5c6b7a82"}, ' +
  '{"integrations": {}, "previousId": "a1", "timestamp": "2026-11-25T21:15:05.322+00:00", ' +
  '"context": {"library": {"name": "analytics-python", "version": "2.3.4"}}, "userId": "u1", "type": "alias", ' +
  '"messageId": "2d9e1f30-8c21-4da0-9c79-4f5e6d7c8b93"}, ' +
  '{"integrations": {}, "anonymousId": null, "traits": {"email": "a@example.com", "age": null}, ' +
  '"timestamp": "2026-11-25T21:15:05.323+00:00", "context": {"library": {"name": "analytics-python", "version": "2.3.4"}}, ' +
  '"userId": "u1", "type": "identify", "messageId": "3eaf2041-9d32-4eb1-8d8a-506f7e8d9ca4"}, ' +
  '{"integrations": {}, "anonymousId": null, "traits": {}, "timestamp": "2026-11-25T21:15:05.324+00:00", ' +
  '"context": {"library": {"name": "analytics-python", "version": "2.3.4"}}, "userId": "u1", "type": "group", ' +
  '"groupId": "g1", "messageId": "4fb03152-ae43-4fc2-9e9b-617080900db5"}' +
  '], "sentAt": "2026-11-25T21:15:05.412774+00:00", "writeKey": "WK"}';

/** analytics-python ≤ 2.2.1: microsecond timestamps, no writeKey in the body (it sends Basic auth). */
export const PYTHON_2_2_BATCH_BODY =
  '{"batch": [{"integrations": {}, "anonymousId": null, "properties": {}, ' +
  '"timestamp": "2026-11-25T21:15:05.320774+00:00", "context": {"library": {"name": "analytics-python", "version": "2.2.1"}}, ' +
  '"userId": "u1", "type": "track", "event": "Signed Up", "messageId": "5ac14263-bf54-40d3-af0c-728191a11ec6"}], ' +
  '"sentAt": "2026-11-25T21:15:05+00:00"}';

/**
 * analytics-ruby 2.5.0 posting to /v1/import with `Authorization: Basic V0s6`: compact JSON, raw UTF-8,
 * sentAt first, local times with an offset, `options` when given, page name defaulting to "".
 */
export const RUBY_IMPORT_BODY =
  '{"sentAt":"2026-11-25T16:15:05.412-05:00","batch":[' +
  '{"context":{"library":{"name":"analytics-ruby","version":"2.5.0"}},"messageId":"6bd25374-c065-41e4-b01d-8392a2b22fd7",' +
  '"timestamp":"2026-11-25T16:15:05.320-05:00","userId":"u1","event":"Order Completed","properties":{"city":"München"},' +
  '"options":{"foo":"bar"},"type":"track"},' +
  '{"context":{"library":{"name":"analytics-ruby","version":"2.5.0"}},"messageId":"7ce36485-d176-42f5-812e-94a3b3c330e8",' +
  '"timestamp":"2026-11-25T16:15:05.321-05:00","anonymousId":"a1","name":"","properties":{},"type":"page"}' +
  ']}';

const NODE_LIBRARY = '{"library":{"name":"@segment/analytics-node","version":"3.1.0"}}';
const NODE_METADATA = '{"nodeVersion":"v20.20.2","jsRuntime":"node"}';

/** @segment/analytics-node 3.1.0 (with `Authorization: Basic V0s6` and writeKey in the body). */
export const NODE_3_1_BATCH_BODY =
  '{"batch":[' +
  `{"timestamp":"2026-11-25T21:15:05.320Z","integrations":{},"event":"Signed Up","type":"track","properties":{"plan":"pro","n":null},"context":${NODE_LIBRARY},"userId":"u1","messageId":"node-next-1795644748578-2f7398eb-4895-40d4-981b-b55fecc2b984","_metadata":${NODE_METADATA}},` +
  `{"timestamp":"2026-11-25T21:15:05.321Z","integrations":{},"type":"page","properties":{"url":"x","category":"Docs"},"category":"Docs","name":"Home","context":${NODE_LIBRARY},"anonymousId":"a1","messageId":"node-next-1795644748579-98eb4895-b0d4-481b-b55f-ecc2b984b7c3","_metadata":${NODE_METADATA}},` +
  `{"timestamp":"2026-11-25T21:15:05.322Z","integrations":{},"type":"group","traits":{"name":"Acme"},"groupId":"g1","context":${NODE_LIBRARY},"messageId":"node-next-1795644748580-4895b0d4-d81b-455f-acc2-b984b7c36be3","_metadata":${NODE_METADATA}},` +
  `{"timestamp":"2026-11-25T21:15:05.323Z","integrations":{},"type":"identify","userId":"u42","traits":{"email":"e"},"context":${NODE_LIBRARY},"messageId":"node-next-1795644748580-b0d4d81b-b55f-4cc2-b984-b7c36be3c1fe","_metadata":${NODE_METADATA}},` +
  `{"timestamp":"2026-11-25T21:15:05.324Z","integrations":{},"userId":"u2","type":"alias","previousId":"u1","context":${NODE_LIBRARY},"messageId":"node-next-1795644748580-d81bb55f-ecc2-4984-b7c3-6be3c1fe45c3","_metadata":${NODE_METADATA}},` +
  `{"timestamp":"2026-11-25T21:15:05.325Z","integrations":{},"type":"screen","properties":{},"name":"Main","context":${NODE_LIBRARY},"userId":"u1","messageId":"node-next-1795644748580-b55fecc2-b984-47c3-abe3-c1fe45c3ec0b","_metadata":${NODE_METADATA}}` +
  '],"writeKey":"WK","sentAt":"2026-11-25T21:15:05.330Z"}';
