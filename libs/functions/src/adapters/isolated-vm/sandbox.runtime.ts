/**
 * The runtime a function finds in its isolate (specs/functions.md §3): `fetch`, `Headers`, `Response`,
 * `URL`, `URLSearchParams`, `console`, the five error classes, `Segment` (source functions), `btoa`,
 * `atob`, `TextEncoder`, `TextDecoder` and `crypto`, all written here in plain ECMAScript.
 *
 * `sandboxRuntime` is never called in this process: its source text (`SANDBOX_RUNTIME_SOURCE`) is
 * evaluated inside each isolate, so it may use only ECMAScript built-ins, nothing it closes over here.
 * What only the host can do (sockets, hashes, randomness, URL parsing) it asks through the host
 * functions it is given, which take and answer copies. It takes them off the global object before the
 * function's code runs, and keeps the built-ins it relies on, so a function that replaces
 * `JSON.stringify` or `Array.prototype.push` breaks only itself.
 *
 * Invocations of one isolate run one after another (`runBatch`), so what `console`, `fetch` and
 * `Segment` record belongs to the invocation under way (`current`).
 */

/* eslint-disable prefer-rest-params */

export interface SandboxRuntimeConfig {
  readonly kind: 'SOURCE' | 'DESTINATION' | 'INSERT_DESTINATION';
  readonly entries: readonly string[];
  readonly maxLogLines: number;
  readonly maxLogBytes: number;
  readonly maxFetches: number;
  readonly maxEmitted: number;
  /** The global names of the host functions, taken off the global object at start. */
  readonly hostNames: {
    readonly fetch: string;
    readonly url: string;
    readonly hash: string;
    readonly random: string;
    readonly done: string;
    readonly doneNow: string;
  };
}

/** Runs inside the isolate; answers the functions the host calls there. */
export function sandboxRuntime(config: SandboxRuntimeConfig): unknown {
  'use strict';
  const g: any = globalThis;
  const host: any = {};
  for (const key of Object.keys(config.hostNames)) {
    const name = (config.hostNames as any)[key];
    host[key] = g[name];
    delete g[name];
  }
  const { stringify, parse } = JSON;
  const apply = Reflect.apply;
  const sliceText = String.prototype.slice;
  const defineProperty = Object.defineProperty;
  const freeze = Object.freeze;
  const now = Date.now;
  const toISO = (time: number) => new Date(time).toISOString();
  const fromCharCode = String.fromCharCode;
  const PromiseCtor = Promise;

  let current: any = null;
  let handlers: any = {};

  // --- errors -------------------------------------------------------------------------------------
  const errorClass = (name: string) => {
    const made = class extends Error {
      constructor(message?: string) {
        super(message);
        defineProperty(this, 'name', { value: name, writable: true, configurable: true });
      }
    };
    defineProperty(made, 'name', { value: name });
    return made;
  };
  const ValidationError = errorClass('ValidationError');
  const InvalidEventPayload = errorClass('InvalidEventPayload');
  const EventNotSupported = errorClass('EventNotSupported');
  const RetryError = errorClass('RetryError');
  const DropEvent = errorClass('DropEvent');

  // --- console (util.format-like) -----------------------------------------------------------------
  const show = (value: any, nested: boolean): string => {
    if (typeof value === 'string') return nested ? stringify(value) : value;
    if (typeof value === 'bigint') return `${value}n`;
    if (typeof value === 'symbol' || typeof value === 'undefined' || typeof value === 'number')
      return String(value);
    if (typeof value === 'boolean' || value === null) return String(value);
    if (typeof value === 'function') return `[Function: ${value.name || '(anonymous)'}]`;
    if (value instanceof Error) return value.stack || `${value.name}: ${value.message}`;
    try {
      const text = stringify(value);
      return text === undefined ? String(value) : text;
    } catch {
      return '[Circular]';
    }
  };
  const format = (args: any[]): string => {
    let first = args[0];
    let rest = 1;
    let out = '';
    if (typeof first === 'string' && args.length > 1) {
      out = first.replace(/%[sdifjoOc%]/g, (token: string) => {
        if (token === '%%') return '%';
        if (rest >= args.length) return token;
        const value = args[rest++];
        switch (token) {
          case '%s':
            return typeof value === 'string' ? value : show(value, true);
          case '%d':
          case '%i': {
            const number = Number(value);
            return String(token === '%i' ? Math.trunc(number) : number);
          }
          case '%f':
            return String(parseFloat(value));
          case '%c':
            return '';
          default:
            return show(value, true);
        }
      });
      first = undefined;
    } else {
      out = show(first, false);
    }
    for (let index = rest; index < args.length; index++) out += ` ${show(args[index], false)}`;
    return out;
  };
  const cut = (text: string, bytes: number): string => {
    // Cut by UTF-8 bytes without splitting a character.
    let size = 0;
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index);
      size += code < 0x80 ? 1 : code < 0x800 ? 2 : code >= 0xd800 && code <= 0xdbff ? 4 : 3;
      if (code >= 0xd800 && code <= 0xdbff) index++;
      if (size > bytes) return text.slice(0, code >= 0xd800 && code <= 0xdbff ? index - 1 : index);
    }
    return text;
  };
  const record = (level: string, message: string) => {
    const state = current;
    if (!state) return;
    if (state.logs.length >= config.maxLogLines) {
      state.dropped++;
      return;
    }
    state.logs.push({ time: toISO(now()), level, message: cut(message, config.maxLogBytes) });
  };
  const consoleObject: any = {};
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    consoleObject[level] = function () {
      record(level, format(Array.prototype.slice.call(arguments)));
    };
  }
  consoleObject.trace = consoleObject.debug;

  // --- text, base64 -------------------------------------------------------------------------------
  const utf8Encode = (text: string): Uint8Array => {
    const bytes: number[] = [];
    for (let index = 0; index < text.length; index++) {
      let code = text.charCodeAt(index);
      if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
        const next = text.charCodeAt(index + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
          index++;
        } else code = 0xfffd;
      } else if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
      if (code < 0x80) bytes.push(code);
      else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 63));
      else if (code < 0x10000) bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63));
      else
        bytes.push(
          0xf0 | (code >> 18),
          0x80 | ((code >> 12) & 63),
          0x80 | ((code >> 6) & 63),
          0x80 | (code & 63),
        );
    }
    return new Uint8Array(bytes);
  };
  const utf8Decode = (bytes: Uint8Array): string => {
    let out = '';
    let chunk: number[] = [];
    const flush = () => {
      out += fromCharCode(...chunk);
      chunk = [];
    };
    for (let index = 0; index < bytes.length;) {
      const byte = bytes[index]!;
      let code = 0xfffd;
      let length = 1;
      if (byte < 0x80) code = byte;
      else if (
        byte >= 0xc2 &&
        byte < 0xe0 &&
        index + 1 < bytes.length &&
        (bytes[index + 1]! & 0xc0) === 0x80
      ) {
        code = ((byte & 31) << 6) | (bytes[index + 1]! & 63);
        length = 2;
      } else if (
        byte >= 0xe0 &&
        byte < 0xf0 &&
        index + 2 < bytes.length &&
        (bytes[index + 1]! & 0xc0) === 0x80 &&
        (bytes[index + 2]! & 0xc0) === 0x80
      ) {
        code = ((byte & 15) << 12) | ((bytes[index + 1]! & 63) << 6) | (bytes[index + 2]! & 63);
        length = 3;
        if (code < 0x800 || (code >= 0xd800 && code <= 0xdfff)) code = 0xfffd;
      } else if (
        byte >= 0xf0 &&
        byte < 0xf5 &&
        index + 3 < bytes.length &&
        (bytes[index + 1]! & 0xc0) === 0x80 &&
        (bytes[index + 2]! & 0xc0) === 0x80 &&
        (bytes[index + 3]! & 0xc0) === 0x80
      ) {
        code =
          ((byte & 7) << 18) |
          ((bytes[index + 1]! & 63) << 12) |
          ((bytes[index + 2]! & 63) << 6) |
          (bytes[index + 3]! & 63);
        length = 4;
        if (code < 0x10000 || code > 0x10ffff) code = 0xfffd;
      }
      index += length;
      if (code >= 0x10000) {
        code -= 0x10000;
        chunk.push(0xd800 + (code >> 10), 0xdc00 + (code & 1023));
      } else chunk.push(code);
      if (chunk.length > 8_000) flush();
    }
    flush();
    return out;
  };
  const toBytes = (data: any): Uint8Array => {
    if (typeof data === 'string') return utf8Encode(data);
    if (data instanceof Uint8Array) return data;
    if (data instanceof ArrayBuffer) return new Uint8Array(data);
    if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    throw new TypeError('expected a string, an ArrayBuffer or a typed array');
  };
  class TextEncoder {
    get encoding() {
      return 'utf-8';
    }
    encode(text = '') {
      return utf8Encode(String(text));
    }
  }
  class TextDecoder {
    constructor(label = 'utf-8') {
      const name = String(label).toLowerCase();
      if (name !== 'utf-8' && name !== 'utf8')
        throw new RangeError(`The "${label}" encoding is not supported`);
    }
    get encoding() {
      return 'utf-8';
    }
    decode(data?: any) {
      if (data === undefined) return '';
      let bytes = toBytes(data);
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
      return utf8Decode(bytes);
    }
  }
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const base64Of = (bytes: ArrayLike<number>): string => {
    let out = '';
    for (let index = 0; index < bytes.length; index += 3) {
      const a = bytes[index]!;
      const b = index + 1 < bytes.length ? bytes[index + 1]! : 0;
      const c = index + 2 < bytes.length ? bytes[index + 2]! : 0;
      out += ALPHABET[a >> 2]! + ALPHABET[((a & 3) << 4) | (b >> 4)]!;
      out += index + 1 < bytes.length ? ALPHABET[((b & 15) << 2) | (c >> 6)]! : '=';
      out += index + 2 < bytes.length ? ALPHABET[c & 63]! : '=';
    }
    return out;
  };
  const btoa = (text: any): string => {
    const value = String(text);
    const bytes: number[] = [];
    for (let index = 0; index < value.length; index++) {
      const code = value.charCodeAt(index);
      if (code > 255) throw new Error('InvalidCharacterError: btoa takes Latin-1 characters only');
      bytes.push(code);
    }
    return base64Of(bytes);
  };
  const atob = (text: any): string => {
    let value = String(text).replace(/[\t\n\f\r ]/g, '');
    if (value.length % 4 === 0) value = value.replace(/==?$/, '');
    if (value.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(value)) {
      throw new Error('InvalidCharacterError: the string is not correctly encoded');
    }
    let out = '';
    let buffer = 0;
    let bits = 0;
    for (let index = 0; index < value.length; index++) {
      buffer = (buffer << 6) | ALPHABET.indexOf(value[index]!);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out += fromCharCode((buffer >> bits) & 255);
      }
    }
    return out;
  };

  // --- URLSearchParams, URL -----------------------------------------------------------------------
  const formEncode = (text: string) =>
    encodeURIComponent(text)
      .replace(/%20/g, '+')
      .replace(/[!'()~]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
  const formDecode = (text: string) => {
    const spaced = text.replace(/\+/g, ' ');
    try {
      return decodeURIComponent(spaced);
    } catch {
      return spaced;
    }
  };
  const searchLinks = new WeakMap<object, any>();
  class URLSearchParams {
    #list: [string, string][] = [];
    constructor(init?: any) {
      if (init instanceof URLSearchParams) this.#list = init.#list.map(([key, value]) => [key, value]);
      else if (init !== undefined && init !== null && typeof init === 'object') {
        const pairs = typeof init[Symbol.iterator] === 'function' ? Array.from(init) : Object.entries(init);
        for (const pair of pairs as any[]) {
          if (!pair || pair.length !== 2) throw new TypeError('each pair must have a name and a value');
          this.#list.push([String(pair[0]), String(pair[1])]);
        }
      } else if (init !== undefined) {
        const text = String(init).replace(/^\?/, '');
        for (const part of text.split('&')) {
          if (part === '') continue;
          const equals = part.indexOf('=');
          this.#list.push(
            equals < 0
              ? [formDecode(part), '']
              : [formDecode(part.slice(0, equals)), formDecode(part.slice(equals + 1))],
          );
        }
      }
    }
    #changed() {
      const url = searchLinks.get(this);
      if (url) url._setSearchFromParams(this.toString());
    }
    get size() {
      return this.#list.length;
    }
    append(name: any, value: any) {
      this.#list.push([String(name), String(value)]);
      this.#changed();
    }
    delete(name: any) {
      this.#list = this.#list.filter(([key]) => key !== String(name));
      this.#changed();
    }
    get(name: any) {
      const found = this.#list.find(([key]) => key === String(name));
      return found ? found[1] : null;
    }
    getAll(name: any) {
      return this.#list.filter(([key]) => key === String(name)).map(([, value]) => value);
    }
    has(name: any) {
      return this.#list.some(([key]) => key === String(name));
    }
    set(name: any, value: any) {
      const key = String(name);
      const index = this.#list.findIndex(([each]) => each === key);
      if (index < 0) this.#list.push([key, String(value)]);
      else {
        this.#list[index] = [key, String(value)];
        this.#list = this.#list.filter(([each], at) => each !== key || at === index);
      }
      this.#changed();
    }
    sort() {
      this.#list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      this.#changed();
    }
    forEach(callback: any, thisArg?: any) {
      for (const [key, value] of this.#list) callback.call(thisArg, value, key, this);
    }
    keys() {
      return this.#list.map(([key]) => key)[Symbol.iterator]();
    }
    values() {
      return this.#list.map(([, value]) => value)[Symbol.iterator]();
    }
    entries() {
      return this.#list.map(([key, value]) => [key, value])[Symbol.iterator]();
    }
    [Symbol.iterator]() {
      return this.entries();
    }
    toString() {
      return this.#list.map(([key, value]) => `${formEncode(key)}=${formEncode(value)}`).join('&');
    }
  }
  const URL_PARTS = [
    'href',
    'protocol',
    'username',
    'password',
    'host',
    'hostname',
    'port',
    'pathname',
    'search',
    'hash',
  ];
  const parseUrl = (href: string, base?: string, key?: string, value?: string): any => {
    const parts = host.url(
      href,
      base === undefined ? null : base,
      key === undefined ? null : key,
      value ?? null,
    );
    if (parts === null) throw new TypeError(`Invalid URL: ${href}`);
    return parts;
  };
  /** Each URL's parts, as the host parsed them (copied strings). */
  const urlParts = new WeakMap<object, any>();
  const partsOf = (url: any) => {
    const parts = urlParts.get(url);
    if (!parts) throw new TypeError('Illegal invocation');
    return parts;
  };
  class URL {
    #params: URLSearchParams | undefined;
    constructor(url: any, base?: any) {
      urlParts.set(this, parseUrl(String(url), base === undefined ? undefined : String(base)));
    }
    static canParse(url: any, base?: any) {
      try {
        parseUrl(String(url), base === undefined ? undefined : String(base));
        return true;
      } catch {
        return false;
      }
    }
    get origin() {
      return partsOf(this).origin;
    }
    get searchParams() {
      if (!this.#params) {
        this.#params = new URLSearchParams(partsOf(this).search);
        searchLinks.set(this.#params, this);
      }
      return this.#params;
    }
    _setSearchFromParams(search: string) {
      urlParts.set(this, parseUrl(partsOf(this).href, undefined, 'search', search));
    }
    toString() {
      return partsOf(this).href;
    }
    toJSON() {
      return partsOf(this).href;
    }
  }
  for (const key of URL_PARTS) {
    defineProperty(URL.prototype, key, {
      configurable: true,
      enumerable: true,
      get(this: any) {
        return partsOf(this)[key];
      },
      set(this: any, value: any) {
        const updated = parseUrl(partsOf(this).href, undefined, key, String(value));
        urlParts.set(this, updated);
        if (key === 'search' || key === 'href') {
          // The linked search params follow the new query.
          const params = new URLSearchParams(updated.search);
          const linked = (this as any).searchParams;
          for (const name of [...linked.keys()]) linked.delete(name);
          for (const [name, each] of params) linked.append(name, each);
        }
      },
    });
  }

  // --- Headers, Response --------------------------------------------------------------------------
  class Headers {
    #map = new Map<string, string>();
    constructor(init?: any) {
      if (init instanceof Headers) init.forEach((value: string, name: string) => this.append(name, value));
      else if (init !== undefined && init !== null) {
        const pairs = typeof init[Symbol.iterator] === 'function' ? Array.from(init) : Object.entries(init);
        for (const pair of pairs as any[]) this.append(pair[0], pair[1]);
      }
    }
    #name(name: any) {
      const key = String(name).toLowerCase();
      if (!/^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(key)) throw new TypeError(`Invalid header name: ${name}`);
      return key;
    }
    append(name: any, value: any) {
      const key = this.#name(name);
      const text = String(value).trim();
      const existing = this.#map.get(key);
      this.#map.set(key, existing === undefined ? text : `${existing}, ${text}`);
    }
    set(name: any, value: any) {
      this.#map.set(this.#name(name), String(value).trim());
    }
    get(name: any) {
      const value = this.#map.get(String(name).toLowerCase());
      return value === undefined ? null : value;
    }
    has(name: any) {
      return this.#map.has(String(name).toLowerCase());
    }
    delete(name: any) {
      this.#map.delete(String(name).toLowerCase());
    }
    forEach(callback: any, thisArg?: any) {
      for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
    }
    entries() {
      return [...this.#map.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))[Symbol.iterator]();
    }
    keys() {
      return [...this.#map.keys()].sort()[Symbol.iterator]();
    }
    values() {
      return [...this.entries()].map(([, value]) => value)[Symbol.iterator]();
    }
    [Symbol.iterator]() {
      return this.entries();
    }
  }
  const STATUS_TEXT: Record<number, string> = {
    200: 'OK',
    201: 'Created',
    204: 'No Content',
    400: 'Bad Request',
  };
  class Response {
    #body: Uint8Array | null;
    #tooLarge: string | undefined;
    #used = false;
    readonly status: number;
    readonly statusText: string;
    readonly headers: Headers;
    readonly url: string;
    readonly redirected: boolean;
    constructor(body?: any, init: any = {}) {
      this.#body =
        body === undefined || body === null
          ? null
          : toBytes(
              typeof body === 'object' && !ArrayBuffer.isView(body) && !(body instanceof ArrayBuffer)
                ? String(body)
                : body,
            );
      this.status = init.status === undefined ? 200 : Number(init.status);
      if (!(this.status >= 200 && this.status <= 599)) throw new RangeError(`Invalid status ${init.status}`);
      this.statusText =
        init.statusText === undefined ? (STATUS_TEXT[this.status] ?? '') : String(init.statusText);
      this.headers = new Headers(init.headers);
      this.url = init._url ?? '';
      this.redirected = init._redirected === true;
      this.#tooLarge = init._tooLarge;
    }
    get ok() {
      return this.status >= 200 && this.status <= 299;
    }
    get bodyUsed() {
      return this.#used;
    }
    #read(): Promise<Uint8Array> {
      if (this.#used)
        return PromiseCtor.reject(new TypeError('Body is unusable: Body has already been read'));
      this.#used = true;
      if (this.#tooLarge !== undefined) return PromiseCtor.reject(new TypeError(this.#tooLarge));
      return PromiseCtor.resolve(this.#body ?? new Uint8Array(0));
    }
    text() {
      return this.#read().then(utf8Decode);
    }
    json() {
      return this.text().then((text) => parse(text));
    }
    arrayBuffer() {
      return this.#read().then((bytes) => bytes.slice().buffer);
    }
    clone() {
      if (this.#used) throw new TypeError('Response body is already used');
      return new Response(this.#body, {
        status: this.status,
        statusText: this.statusText,
        headers: this.headers,
        _url: this.url,
        _redirected: this.redirected,
        _tooLarge: this.#tooLarge,
      });
    }
  }

  // --- fetch --------------------------------------------------------------------------------------
  const fetch = async (input: any, init: any = {}) => {
    const state = current;
    if (!state) throw new TypeError('fetch is available only while the function runs');
    if (state.fetches >= config.maxFetches) throw new TypeError('fetch limit');
    state.fetches++;
    const url =
      input instanceof URL
        ? (input as any).href
        : String(input && typeof input === 'object' && 'url' in input ? input.url : input);
    const method = String(init.method ?? 'GET').toUpperCase();
    const headers = [...new Headers(init.headers).entries()];
    let body: any = init.body;
    if (body instanceof URLSearchParams) {
      if (!headers.some(([key]) => key === 'content-type')) {
        headers.push(['content-type', 'application/x-www-form-urlencoded;charset=UTF-8']);
      }
      body = body.toString();
    }
    if (body !== undefined && body !== null) {
      body = typeof body === 'string' ? body : toBytes(body);
      if (typeof body === 'string' && !headers.some(([key]) => key === 'content-type')) {
        headers.push(['content-type', 'text/plain;charset=UTF-8']);
      }
    } else body = null;
    const redirect = init.redirect === undefined ? 'follow' : String(init.redirect);
    let answer: any;
    try {
      answer = await host.fetch.apply(undefined, [{ url, method, headers, body, redirect }], {
        arguments: { copy: true },
        result: { promise: true, copy: true },
      });
    } catch (error: any) {
      throw new TypeError(error && typeof error.message === 'string' ? error.message : 'fetch failed');
    }
    if (typeof answer.error === 'string') throw new TypeError(answer.error);
    return new Response(answer.body, {
      status: answer.status,
      statusText: answer.statusText,
      headers: answer.headers,
      _url: answer.url,
      _redirected: answer.redirected,
      _tooLarge: answer.tooLarge,
    });
  };

  // --- crypto -------------------------------------------------------------------------------------
  const HASHES = ['sha1', 'sha256', 'sha512', 'md5'];
  const digester = (algorithm: any, key: Uint8Array | null) => {
    const name = String(algorithm).toLowerCase();
    if (!HASHES.includes(name)) throw new Error(`Digest method not supported: ${algorithm}`);
    const chunks: Uint8Array[] = [];
    let finished = false;
    const object = {
      update(data: any) {
        if (finished) throw new Error('Digest already called');
        chunks.push(toBytes(data).slice());
        return object;
      },
      digest(encoding?: any) {
        if (finished) throw new Error('Digest already called');
        finished = true;
        const wanted = encoding === undefined ? 'hex' : String(encoding);
        if (wanted !== 'hex' && wanted !== 'base64') throw new Error(`digest encoding must be hex or base64`);
        let length = 0;
        for (const chunk of chunks) length += chunk.length;
        const all = new Uint8Array(length);
        let offset = 0;
        for (const chunk of chunks) {
          all.set(chunk, offset);
          offset += chunk.length;
        }
        return host.hash(name, key, all, wanted);
      },
    };
    return object;
  };
  const crypto = freeze({
    randomUUID() {
      const bytes = host.random(16) as Uint8Array;
      bytes[6] = (bytes[6]! & 0x0f) | 0x40;
      bytes[8] = (bytes[8]! & 0x3f) | 0x80;
      const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    },
    getRandomValues(array: any) {
      if (
        !ArrayBuffer.isView(array) ||
        array instanceof Float32Array ||
        array instanceof Float64Array ||
        array instanceof DataView
      ) {
        throw new TypeError('getRandomValues takes an integer typed array');
      }
      if (array.byteLength > 65_536) throw new Error('QuotaExceededError: at most 65536 bytes');
      const bytes = host.random(array.byteLength) as Uint8Array;
      new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(bytes);
      return array;
    },
    createHash(algorithm: any) {
      return digester(algorithm, null);
    },
    createHmac(algorithm: any, key: any) {
      return digester(algorithm, toBytes(key).slice());
    },
  });

  // --- Segment (source functions) -----------------------------------------------------------------
  const emitter = (type: string) =>
    function (message: any) {
      const state = current;
      if (!state) throw new Error('Segment calls are available only while the function runs');
      if (message === null || typeof message !== 'object' || Array.isArray(message)) {
        throw new ValidationError(`Segment.${type} takes an object`);
      }
      if (state.emitted.length >= config.maxEmitted) {
        throw new ValidationError(`more than ${config.maxEmitted} messages emitted`);
      }
      const copy = parse(stringify(message));
      copy.type = type;
      state.emitted.push(copy);
    };
  const Segment = freeze({
    identify: emitter('identify'),
    track: emitter('track'),
    page: emitter('page'),
    screen: emitter('screen'),
    group: emitter('group'),
    alias: emitter('alias'),
    set() {
      throw new EventNotSupported('Segment.set is not supported');
    },
  });

  // --- globals ------------------------------------------------------------------------------------
  const globals: Record<string, unknown> = {
    fetch,
    Headers,
    Response,
    URL,
    URLSearchParams,
    console: freeze(consoleObject),
    ValidationError,
    InvalidEventPayload,
    EventNotSupported,
    RetryError,
    DropEvent,
    btoa,
    atob,
    TextEncoder,
    TextDecoder,
    crypto,
  };
  if (config.kind === 'SOURCE') globals.Segment = Segment;
  for (const name of Object.keys(globals)) {
    defineProperty(g, name, { value: globals[name], writable: true, configurable: true, enumerable: false });
  }

  // --- invocations --------------------------------------------------------------------------------
  const requestOf = (payload: any) => {
    const body = String(payload.body ?? '');
    return freeze({
      method: String(payload.method ?? 'POST'),
      url: new URL(String(payload.url)),
      headers: new Headers(payload.headers ?? {}),
      text: async () => body,
      json: async () => parse(body),
    });
  };
  const nameOf = (error: any): string => {
    if (error instanceof Error || (error && typeof error === 'object' && typeof error.name === 'string')) {
      return String(error.name || 'Error');
    }
    return 'Error';
  };
  const messageOf = (error: any): string => {
    if (error && typeof error === 'object' && 'message' in error) return String(error.message);
    return String(error);
  };
  let latest: Promise<void> = Promise.resolve();
  /** `payloadText`: the payload's JSON as the host sent it. */
  const runOne = async (invocation: any, payloadText: string) => {
    const state: any = { logs: [], dropped: 0, fetches: 0, emitted: [], started: now() };
    current = state;
    let result: any;
    let valueText: string | true | undefined;
    try {
      const handler = handlers[invocation.entry];
      if (typeof handler !== 'function') result = { status: 'no_handler' };
      else {
        const argument =
          invocation.entry === 'onRequest' ? requestOf(invocation.payload) : invocation.payload;
        const value = await handler(argument, invocation.settings);
        result = { status: 'resolved' };
        // Serialized here once, and reported beside the result (`runBatch`); a value that serializes
        // to the payload as it came is reported as `true`: the host has it already.
        if (value !== undefined) valueText = stringify(value);
        if (valueText === payloadText) valueText = true;
        if (config.kind === 'SOURCE') result.emitted = state.emitted;
      }
    } catch (error) {
      valueText = undefined;
      result = {
        status: 'threw',
        name: cut(nameOf(error), 200),
        message: cut(messageOf(error), config.maxLogBytes),
      };
      record('error', `${result.name}: ${result.message}`);
    }
    current = null;
    result.logs = state.logs;
    result.logsDropped = state.dropped;
    result.durationMs = now() - state.started;
    return { result, valueText };
  };
  return {
    /** Keeps the handlers the function's code declared (read by the host's probe after the code ran). */
    setHandlers(found: any) {
      handlers = {};
      for (const entry of config.entries)
        if (typeof found[entry] === 'function') handlers[entry] = found[entry];
    },
    /**
     * Runs invocations one after another; reports each result to the host as it settles, so that an
     * invocation that ends the isolate is told from those before and after it. `first` is the
     * index of the first in the host's batch; `atOnce` reports through the host's synchronous
     * callback (the host runs this on its own thread and reads the report as soon as the call returns).
     */
    runBatch(invocationsJson: string, payloadsAt: number[], first = 0, atOnce = false) {
      latest = runInvocations(invocationsJson, payloadsAt, first, atOnce);
      return latest;
    },
    /** Settles when the latest `runBatch` has: what the host awaits of a call it made at once. */
    settled() {
      return latest;
    },
  };
  /**
   * `invocationsJson` is an array of invocations; `payloadsAt` says where each one's payload lies in
   * it (from, to, from, to, …).
   */
  async function runInvocations(
    invocationsJson: string,
    payloadsAt: number[],
    first: number,
    atOnce: boolean,
  ) {
    const report = atOnce ? host.doneNow : host.done;
    const invocations = parse(invocationsJson);
    for (let index = 0; index < invocations.length; index++) {
      const payloadText = apply(sliceText, invocationsJson, [
        payloadsAt[2 * index],
        payloadsAt[2 * index + 1],
      ]) as string;
      const { result, valueText } = await runOne(invocations[index], payloadText);
      let text: string;
      try {
        text = stringify(result);
      } catch (error) {
        text = stringify({
          status: 'threw',
          name: 'TypeError',
          message: messageOf(error),
          logs: [],
          logsDropped: 0,
          durationMs: 0,
        });
      }
      // The value goes beside the report, not in it: the host reads it only when it changed.
      report(first + index, text, valueText);
    }
  }
}
