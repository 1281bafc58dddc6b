-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "delivery_status" AS ENUM ('PENDING', 'DELIVERED', 'DEAD');

-- CreateTable
CREATE TABLE "client" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "callback_prefixes" TEXT[],
    "signing_secret" TEXT NOT NULL,
    "max_subscriptions" INTEGER NOT NULL DEFAULT 10000,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "client_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_key" (
    "id" UUID NOT NULL,
    "client_id" UUID NOT NULL,
    "lookup_prefix" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "scopes" TEXT[],
    "label" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_key_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "subscription" (
    "id" UUID NOT NULL,
    "client_id" UUID NOT NULL,
    "awb" TEXT NOT NULL,
    "callback" TEXT NOT NULL,
    "states" TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "subscription_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "status_event" (
    "id" UUID NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "dedupe_key" TEXT NOT NULL,
    "awb" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "toa_timestamp" TIMESTAMPTZ(3),
    "station" TEXT,
    "flight" TEXT,

    CONSTRAINT "status_event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "delivery" (
    "id" UUID NOT NULL,
    "event_id" UUID NOT NULL,
    "subscription_id" UUID,
    "client_id" UUID NOT NULL,
    "callback" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "status" "delivery_status" NOT NULL DEFAULT 'PENDING',
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease_until" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "delivery_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "delivery_attempt" (
    "id" BIGSERIAL NOT NULL,
    "delivery_id" UUID NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,

    CONSTRAINT "delivery_attempt_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "station" (
    "code" CHAR(3) NOT NULL,
    "name" TEXT NOT NULL,
    "country_short" CHAR(2),
    "country_long" TEXT,
    "time_zone" TEXT,
    "freighter_handling" BOOLEAN,
    "passenger_aircraft_handling" BOOLEAN,
    "truck_handling" BOOLEAN,
    "import_details" JSONB,
    "export_details" JSONB,
    "temperature_products" JSONB,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "station_pkey" PRIMARY KEY ("code")
);

-- CreateTable
CREATE TABLE "station_data_version" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "version" INTEGER NOT NULL DEFAULT 0,
    "imported_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "station_data_version_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_key_lookup_prefix_key" ON "api_key"("lookup_prefix");

-- CreateIndex
CREATE INDEX "api_key_client_id_idx" ON "api_key"("client_id");

-- CreateIndex
CREATE INDEX "subscription_awb_idx" ON "subscription"("awb");

-- CreateIndex
CREATE UNIQUE INDEX "subscription_client_id_awb_callback_key" ON "subscription"("client_id", "awb", "callback");

-- CreateIndex
CREATE UNIQUE INDEX "status_event_seq_key" ON "status_event"("seq");

-- CreateIndex
CREATE UNIQUE INDEX "status_event_dedupe_key_key" ON "status_event"("dedupe_key");

-- CreateIndex
CREATE INDEX "status_event_awb_occurred_at_idx" ON "status_event"("awb", "occurred_at");

-- CreateIndex
CREATE INDEX "delivery_status_next_attempt_at_idx" ON "delivery"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "delivery_subscription_id_created_at_idx" ON "delivery"("subscription_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "delivery_event_id_subscription_id_key" ON "delivery"("event_id", "subscription_id");

-- CreateIndex
CREATE INDEX "delivery_attempt_delivery_id_idx" ON "delivery_attempt"("delivery_id");

-- AddForeignKey
ALTER TABLE "api_key" ADD CONSTRAINT "api_key_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "client"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscription" ADD CONSTRAINT "subscription_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "client"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delivery" ADD CONSTRAINT "delivery_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "status_event"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delivery" ADD CONSTRAINT "delivery_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "subscription"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delivery_attempt" ADD CONSTRAINT "delivery_attempt_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "delivery"("id") ON DELETE CASCADE ON UPDATE CASCADE;
