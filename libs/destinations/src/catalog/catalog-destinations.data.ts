/**
 * The built-in destination catalog. Every entry delivers: each has a delivery adapter (webhooks,
 * postgres, or the Segment Actions adapter for the generated Actions entries).
 *
 * Tributary delivers server side only, so every entry's sole component is CLOUD: listing WEB or IOS
 * would promise device-mode bundles that Tributary does not ship. Logos are empty strings: Tributary
 * serves no vendor artwork, and clients treat an empty logo as "none".
 */
import { SCHEMA_NAME_PATTERN, refusedSchemaReason } from '../delivery/adapters/postgres/postgres-schema';
import type { CatalogDestinationDefinition } from './catalog-entry.types';
import { defineSetting } from './destination-setting.builder';
import { ACTIONS_CATALOG_DESTINATIONS } from './actions/actions-catalog.entries';

const HTTP_URL_PATTERN = '^https?://';

const noLogos = { logo: '', mark: '' } as const;

export const CATALOG_DESTINATIONS: readonly CatalogDestinationDefinition[] = [
  {
    slug: 'webhooks',
    displayName: 'Webhooks',
    description:
      'POST every message as JSON to a URL of your choice. With a shared secret, each request carries ' +
      'an X-Signature header: the hex HMAC-SHA1 of the body keyed by the secret.',
    website: 'https://segment.com/docs/connections/destinations/catalog/webhooks/',
    status: 'PUBLIC',
    logos: noLogos,
    components: ['CLOUD'],
    categories: { primary: 'Raw Data', secondary: '', additional: [] },
    settings: [
      defineSetting('url', 'Webhook URL', 'string', {
        required: true,
        pattern: HTTP_URL_PATTERN,
        description: 'Where each message is POSTed.',
      }),
      defineSetting('headers', 'Headers', 'map', {
        description: 'Extra HTTP headers sent with every request, name to value.',
      }),
      defineSetting('shared_secret', 'Shared Secret', 'password', {
        description: 'Signs each request body so the receiver can check it came from Tributary.',
      }),
      // Off by default: receivers written for Segment check the signature of the body alone.
      defineSetting('signature_timestamp', 'Sign a Timestamp', 'boolean', {
        description:
          'With a shared secret: send X-Signature-Timestamp (Unix seconds) and sign "<timestamp>.<body>" ' +
          'instead of the body alone, so the receiver can refuse replayed requests.',
      }),
    ],
    // One request per message: a receiver written for Segment's webhooks expects a single message body.
    capabilities: {
      acceptsHistoricalTimestampsUpToMs: null,
      supportsBatching: false,
      destinationFiltersApply: true,
    },
  },
  {
    slug: 'postgres',
    displayName: 'PostgreSQL',
    description:
      'Insert every message as a row into PostgreSQL tables (one table per message type, plus one per ' +
      "track event) in the source's own schema, for SQL analysis of the raw data. Tributary writes only " +
      'to tables it created there.',
    website: 'https://www.postgresql.org/',
    status: 'PUBLIC',
    logos: noLogos,
    components: ['CLOUD'],
    categories: { primary: 'Warehouses', secondary: '', additional: [] },
    settings: [
      defineSetting('connection_string', 'Connection String', 'password', {
        required: true,
        description:
          'A libpq connection URI, e.g. postgres://user:pass@host:5432/db. Stored encrypted. Socket paths ' +
          'and sslcert, sslkey and sslrootcert are not accepted.',
      }),
      // Empty by default: the adapter then writes to the source's own schema, named after its slug, as
      // Segment's warehouses do, rather than to `public`, which other applications of the database use.
      defineSetting('schema', 'Schema', 'string', {
        pattern: SCHEMA_NAME_PATTERN,
        refusedValueReason: refusedSchemaReason,
        description:
          "The schema that holds the tables; empty means the source's own schema, named after its slug " +
          '(web-app → web_app). System schemas (pg_*, information_schema) are refused.',
      }),
    ],
    // A warehouse: rows are inserted whatever their age, in batches, and Segment does not run
    // destination filters for warehouses (docs/config-api.md D7).
    capabilities: {
      acceptsHistoricalTimestampsUpToMs: null,
      supportsBatching: true,
      destinationFiltersApply: false,
    },
  },
  // Segment's open-source Actions destinations, generated at build time (./actions/).
  ...ACTIONS_CATALOG_DESTINATIONS,
];

/**
 * Entries the catalog used to list without being able to deliver to them: creating one is refused with
 * the name of the destination that replaces it (`undefined` when none does).
 */
export const RETIRED_CATALOG_DESTINATIONS: Readonly<Record<string, string | undefined>> = {
  'google-analytics': 'actions-google-analytics-4',
  mixpanel: 'actions-mixpanel',
  amplitude: 'actions-amplitude',
  slack: 'actions-slack',
  segment: undefined,
};
