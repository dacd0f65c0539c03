// Turns tsconfig "paths" into jest's moduleNameMapper so tests import libs by their aliases.
exports.pathsToModuleNameMapper = function pathsToModuleNameMapper(paths, prefix) {
  const mapper = {};
  for (const [alias, targets] of Object.entries(paths)) {
    const escaped = alias.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    mapper[`^${escaped}$`] = prefix + targets[0];
    mapper[`^${escaped}/(.*)$`] = prefix + targets[0] + '/$1';
  }
  return mapper;
};
