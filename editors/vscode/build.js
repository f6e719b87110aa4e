// `npm run build`: src/*.ts -> out/*.js with esbuild. out/ is committed so the
// node tests (and CI, which has no node_modules) run without npm:
//   out/client.js     src/client.ts with vscode-jsonrpc bundled in (MIT, its licence
//                     beside it as out/vscode-jsonrpc.LICENSE.txt)
//   out/model.js      src/model.ts (no dependencies)
//   out/extension.js  src/extension.ts; requires ./client, ./model and vscode
// Type checking is `npm run typecheck` (esbuild strips types without checking them).
const esbuild = require("esbuild");
const fs = require("fs");

const jsonrpcDir = "node_modules/vscode-jsonrpc";
const jsonrpc = JSON.parse(fs.readFileSync(`${jsonrpcDir}/package.json`, "utf8")).version;
// preserveSymlinks: module paths in the bundle stay node_modules/..., also when node_modules
// is a link (the staleness test builds a copy of this folder linked to it).
const common = { platform: "node", format: "cjs", target: "node18", logLevel: "warning",
                 preserveSymlinks: true };
const banner = (what) => ({ js: `// Built by \`npm run build\` (editors/vscode/build.js) from ${what}; do not edit.` });

esbuild.buildSync({
  ...common, entryPoints: ["src/client.ts"], outfile: "out/client.js", bundle: true,
  banner: banner(`src/client.ts, bundling vscode-jsonrpc ${jsonrpc} (MIT: out/vscode-jsonrpc.LICENSE.txt)`),
});
for (const name of ["model", "extension"]) {
  esbuild.buildSync({
    ...common, entryPoints: [`src/${name}.ts`], outfile: `out/${name}.js`, bundle: false,
    banner: banner(`src/${name}.ts`),
  });
}
fs.copyFileSync(`${jsonrpcDir}/License.txt`, "out/vscode-jsonrpc.LICENSE.txt");
