import { Get, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { WorkspaceRecord } from '@tributary/config-domain';
import { PublicApiController, PublicQueryParams, PublicWorkspace } from './public-api-controller.decorator';
import { PublicApiError } from './public-api.error';
import { paginatePublic, type PublicQuery } from './public-api-query';
import {
  catalogDestinationById,
  catalogSourceById,
  presentDestinationMetadata,
  presentSourceMetadata,
  publicCatalogDestinations,
  publicCatalogSources,
} from './public-catalog.presenter';

/** `GET /public-api/` (and without the slash, which both SDKs never send): the token's workspace. */
@ApiTags('Workspaces')
@PublicApiController()
export class PublicWorkspaceController {
  @Get()
  get(@PublicWorkspace() workspace: WorkspaceRecord) {
    return { data: { workspace: { id: workspace.id, slug: workspace.slug, name: workspace.displayName } } };
  }
}

/** Tributary's own catalog, the one `/v1beta/catalog` lists, in the Public API's shape. */
@ApiTags('Catalog')
@PublicApiController('catalog')
export class PublicCatalogController {
  @Get('sources')
  listSources(@PublicQueryParams() query: PublicQuery) {
    const { items, pagination } = paginatePublic(publicCatalogSources(), query);
    return { data: { sourcesCatalog: items, pagination } };
  }

  @Get('sources/:id')
  getSource(@Param('id') id: string) {
    const entry = catalogSourceById(id);
    if (!entry) throw PublicApiError.notFound();
    return { data: { sourceMetadata: presentSourceMetadata(entry) } };
  }

  @Get('destinations')
  listDestinations(@PublicQueryParams() query: PublicQuery) {
    const { items, pagination } = paginatePublic(publicCatalogDestinations(), query);
    return { data: { destinationsCatalog: items, pagination } };
  }

  @Get('destinations/:id')
  getDestination(@Param('id') id: string) {
    const entry = catalogDestinationById(id);
    if (!entry) throw PublicApiError.notFound();
    return { data: { destinationMetadata: presentDestinationMetadata(entry) } };
  }
}
