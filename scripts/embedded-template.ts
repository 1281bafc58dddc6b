// Run by `npm run build` (and the install's setup): makes the migrated embedded database, with the
// bundled stations, that new embedded databases start from (src/db/embedded-template.ts), unless the
// current migrations' one is there already. A few seconds of CPU once per set of migrations.
import { loadBundledData } from "../src/composition/bundled-data";
import { ensureEmbeddedTemplate } from "../src/db/embedded-template";

ensureEmbeddedTemplate(loadBundledData).then(
  (made) => {
    if (made) console.log("build: made the migrated embedded database new data folders start from");
  },
  (error: unknown) => {
    console.error("build: could not make the migrated embedded database:", error);
    process.exit(1);
  },
);
