/** `npm run catalog:actions`: regenerates the Actions catalog after `@segment/action-destinations` changes. */
import { writeFileSync } from 'node:fs';
import {
  buildActionsCatalog,
  GENERATED_CATALOG_PATH,
  installedActionsVersion,
  renderActionsCatalogModule,
} from './actions-catalog.generator';

const { destinations, leftOut } = buildActionsCatalog();
writeFileSync(GENERATED_CATALOG_PATH, renderActionsCatalogModule(destinations, installedActionsVersion()));
process.stdout.write(`${destinations.length} Actions destinations written to ${GENERATED_CATALOG_PATH}\n`);
process.stdout.write(
  `${leftOut.length} left out:\n${leftOut.map((entry) => `  ${entry.dir}: ${entry.why}`).join('\n')}\n`,
);
