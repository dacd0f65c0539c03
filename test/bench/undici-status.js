// One request through an undici dispatcher, as the ceilings' clients send them: the answer's body is
// read and dropped, and the promise resolves to its status (rejects on a connection error).
'use strict';

function statusOf(dispatcher, request) {
  return new Promise((resolve, reject) => {
    let status = 0;
    dispatcher.dispatch(request, {
      onRequestStart() {},
      onResponseStart(_controller, statusCode) {
        status = statusCode;
      },
      onResponseData() {},
      onResponseEnd: () => resolve(status),
      onResponseError: (_controller, error) => reject(error),
    });
  });
}

module.exports = { statusOf };
