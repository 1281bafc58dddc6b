// npm run schema: writes schema.graphql from the type-graphql code.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { printGatewaySchema } from "../src/graphql/schema";

printGatewaySchema()
  .then((sdl) =>
    writeFile(
      path.resolve(
        __dirname,
        __dirname.includes(`${path.sep}dist${path.sep}`) ? "../../schema.graphql" : "../schema.graphql",
      ),
      sdl,
    ),
  )
  .then(() => console.log("wrote schema.graphql"))
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
