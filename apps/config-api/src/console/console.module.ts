import { Module } from '@nestjs/common';
import { ConsoleBuild } from './console-build';
import { ConsoleController } from './console.controller';

/** The web console at `/console`: the built front end (`console/`), served as static files. */
@Module({
  controllers: [ConsoleController],
  providers: [{ provide: ConsoleBuild, useFactory: () => ConsoleBuild.locate() }],
})
export class ConsoleModule {}
