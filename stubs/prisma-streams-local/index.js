"use strict";
// `prisma dev` is not used here (README, "Supported Node versions"): fail clearly if it ever is.
throw new Error("@prisma/streams-local is stubbed in this project: `prisma dev` is not supported here");
