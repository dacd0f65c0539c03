import { ConfigApiController, ConfigApiError } from '@tributary/config-api-access';
import { Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  findCatalogDestination,
  findCatalogSource,
  listCatalogDestinations,
  listCatalogSources,
  toWireCatalogDestination,
  toWireCatalogSource,
} from '@tributary/destinations';
import { paginate, PageRequest } from '../shared/pagination';

@ApiTags('catalog')
@ConfigApiController('v1beta/catalog')
export class CatalogController {
  @Get('sources')
  listSources(@Query() query: PageRequest) {
    const { page, nextPageToken } = paginate(listCatalogSources(), query);
    return { sources: page.map(toWireCatalogSource), next_page_token: nextPageToken };
  }

  @Get('sources/:slug')
  getSource(@Param('slug') slug: string) {
    const source = findCatalogSource(slug);
    if (!source) throw ConfigApiError.notFound(`catalog/sources/${slug} not found`);
    return toWireCatalogSource(source);
  }

  @Get('destinations')
  listDestinations(@Query() query: PageRequest) {
    const { page, nextPageToken } = paginate(listCatalogDestinations(), query);
    return { destinations: page.map(toWireCatalogDestination), next_page_token: nextPageToken };
  }

  @Get('destinations/:slug')
  getDestination(@Param('slug') slug: string) {
    const destination = findCatalogDestination(slug);
    if (!destination) throw ConfigApiError.notFound(`catalog/destinations/${slug} not found`);
    return toWireCatalogDestination(destination);
  }
}
