// The package.json a published package (`pnpm pack`, `pnpm publish`) carries: what its users
// install and run, not how this repository builds and tests it. Its devDependencies name
// workspace packages that are never published (@convene/contract, @convene/core) and tools an
// installer never needs; its scripts run files the tarball does not hold.
module.exports = {
  hooks: {
    beforePacking(pkg) {
      delete pkg.devDependencies;
      delete pkg.scripts;
      return pkg;
    },
  },
};
