// The API specification's table of error titles (its implementation guidelines, "Error Handling"): the
// ontology has api:hasTitle but no list of titles, so they are read from the specification's pages.
export interface ErrorTitle {
  httpStatus: number;
  title: string;
  message: string;
}

const TABLE_HEADER = /^\|\s*HTTP status code\s*\|\s*Title\s*\|\s*Message in ErrorDetails\s*\|$/;

/** The titles of the one table of error titles in `pages` (the API specification's markdown pages). */
export function readErrorTitles(...pages: string[]): ErrorTitle[] {
  const withTable = pages
    .map((page) => page.split(/\r?\n/))
    .filter((lines) => lines.some((l) => TABLE_HEADER.test(l.trim())));
  const [lines] = withTable;
  if (lines === undefined || withTable.length > 1)
    throw new Error(
      `the table of error titles was not found on exactly one page of the API specification (${withTable.length})`,
    );
  const header = lines.findIndex((line) => TABLE_HEADER.test(line.trim()));
  const titles: ErrorTitle[] = [];
  for (const line of lines.slice(header + 2)) {
    const cells = /^\|(.*)\|$/
      .exec(line.trim())?.[1]
      ?.split("|")
      .map((cell) => cell.trim().replace(/^`|`$/g, ""));
    if (cells === undefined) break;
    const [status, title, message] = cells;
    if (cells.length !== 3 || !/^\d{3}$/.test(status ?? "") || !title || !message)
      throw new Error(`unexpected row in the API specification's table of error titles: ${line}`);
    titles.push({ httpStatus: Number(status), title, message });
  }
  if (titles.length === 0) throw new Error("the API specification's table of error titles is empty");
  return titles;
}
