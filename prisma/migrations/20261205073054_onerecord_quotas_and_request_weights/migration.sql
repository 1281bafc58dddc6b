-- AlterTable
ALTER TABLE "action_request" ADD COLUMN     "bytes" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "operations" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "quota_usage" (
    "quota" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "count" INTEGER NOT NULL,
    "bytes" BIGINT NOT NULL,

    CONSTRAINT "quota_usage_pkey" PRIMARY KEY ("quota","subject")
);

-- Requests stored before: their weights from what they hold.
UPDATE "action_request"
SET "bytes" = octet_length("request"::text),
    "operations" = CASE WHEN jsonb_typeof("request"->'https://onerecord.iata.org/ns/api#hasOperation') = 'array'
                        THEN jsonb_array_length("request"->'https://onerecord.iata.org/ns/api#hasOperation') ELSE 0 END;
