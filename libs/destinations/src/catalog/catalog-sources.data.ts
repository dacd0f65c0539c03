/**
 * The built-in source catalog. A source's catalog entry only names the library that sends to it;
 * every source speaks the same tracking API, so nothing here changes how messages are handled.
 */
import type { CatalogSourceDefinition } from './catalog-entry.types';

export const CATALOG_SOURCES: readonly CatalogSourceDefinition[] = [
  {
    slug: 'javascript',
    displayName: 'Javascript',
    description: 'Track page views and user actions from a website with the browser library (analytics.js).',
    categories: ['Website'],
  },
  {
    slug: 'ios',
    displayName: 'iOS',
    description: 'Track screens and user actions from an iOS app.',
    categories: ['Mobile'],
  },
  {
    slug: 'android',
    displayName: 'Android',
    description: 'Track screens and user actions from an Android app.',
    categories: ['Mobile'],
  },
  {
    slug: 'react-native',
    displayName: 'React Native',
    description: 'Track screens and user actions from a React Native app on iOS and Android.',
    categories: ['Mobile'],
  },
  {
    slug: 'node',
    displayName: 'Node.js',
    description: 'Send messages from a Node.js server; the library batches them in the background.',
    categories: ['Server'],
  },
  {
    slug: 'python',
    displayName: 'Python',
    description: 'Send messages from a Python server or script.',
    categories: ['Server'],
  },
  {
    slug: 'ruby',
    displayName: 'Ruby',
    description: 'Send messages from a Ruby or Rails server.',
    categories: ['Server'],
  },
  {
    slug: 'go',
    displayName: 'Go',
    description: 'Send messages from a Go service.',
    categories: ['Server'],
  },
  {
    slug: 'java',
    displayName: 'Java',
    description: 'Send messages from a Java or other JVM service.',
    categories: ['Server'],
  },
  {
    slug: 'php',
    displayName: 'PHP',
    description: 'Send messages from a PHP server.',
    categories: ['Server'],
  },
  {
    slug: 'http-api',
    displayName: 'HTTP API',
    description: 'Send messages from anywhere with plain HTTP requests to the tracking API.',
    categories: ['Server'],
  },
];
