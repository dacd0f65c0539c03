/**
 * CI guard for the generated Actions catalog: it must match what the installed
 * `@segment/action-destinations` produces (run `npm run catalog:actions` after changing the dependency),
 * and every entry's settings schema must accept settings of the catalog's shape. A drift in a transitive
 * dependency (fast-uri 3.1.9 under ajv made the settings validation of most destinations throw) fails
 * here rather than in production deliveries.
 */
import { readFileSync } from 'node:fs';
import { fixtureSettings } from '../../../test/support/actions-fixtures';
import { listActionsDestinations } from '../src/segment-actions/actions-catalog.entries';
import { createEgressAgents } from '../src/delivery/egress/egress-agents';
import { EgressGuard } from '../src/delivery/egress/egress-guard';
import { loadActionsDestination } from '../src/segment-actions/actions-destination.loader';
import { parseSubscriptionFql } from '../src/segment-actions/actions-subscriptions';
import {
  buildActionsCatalog,
  GENERATED_CATALOG_PATH,
  installedActionsVersion,
  renderActionsCatalogModule,
} from './actions-catalog.generator';

jest.setTimeout(120_000);

describe('generated Actions catalog', () => {
  it('is up to date with the installed @segment/action-destinations (npm run catalog:actions)', () => {
    const { destinations } = buildActionsCatalog();
    const expected = renderActionsCatalogModule(destinations, installedActionsVersion());
    expect(readFileSync(GENERATED_CATALOG_PATH, 'utf8') === expected).toBe(true);
  });

  it("every entry's settings validate, and its presets name existing actions with FQL that parses", () => {
    const agents = createEgressAgents(new EgressGuard());
    const failures: string[] = [];
    try {
      for (const destination of listActionsDestinations()) {
        const runnable = loadActionsDestination(destination.dir, { agents, requestTimeoutMs: 1_000 });
        const settings = Object.fromEntries(
          Object.entries(fixtureSettings(destination)).filter(([, value]) => value !== '' && value !== null),
        );
        try {
          runnable.validateSettings(settings);
        } catch (error) {
          failures.push(`${destination.slug}: ${(error as Error).message}`);
        }
        for (const preset of destination.presets) {
          if (!(preset.partnerAction in runnable.actions))
            failures.push(`${destination.slug}: no action ${preset.partnerAction}`);
          if (typeof parseSubscriptionFql(preset.subscribe) === 'string')
            failures.push(`${destination.slug}: FQL ${preset.subscribe}`);
        }
      }
    } finally {
      agents.destroy();
    }
    expect(failures).toEqual([]);
  });
});
