-- AlterTable
ALTER TABLE "delivery" ADD COLUMN     "kind" TEXT NOT NULL DEFAULT 'WEBHOOK',
ADD COLUMN     "onerecord_subscription_id" UUID,
ALTER COLUMN "event_id" DROP NOT NULL,
ALTER COLUMN "client_id" DROP NOT NULL;

-- AlterTable
ALTER TABLE "logistics_object_grant" ADD COLUMN     "delegation_id" UUID,
ADD COLUMN     "expires_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "onerecord_subscription" (
    "id" UUID NOT NULL,
    "status" TEXT NOT NULL,
    "initiated_by" TEXT NOT NULL,
    "requested_by" TEXT NOT NULL,
    "requested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "decided_at" TIMESTAMPTZ(3),
    "decided_by" TEXT,
    "reason" TEXT,
    "error_status" INTEGER,
    "subscription" JSONB NOT NULL,
    "subscriber" TEXT NOT NULL,
    "topic_type" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "awb" TEXT,
    "event_types" TEXT[],
    "expires_at" TIMESTAMPTZ(3),
    "send_body" BOOLEAN NOT NULL DEFAULT false,
    "notify_status_change" BOOLEAN NOT NULL DEFAULT false,
    "endpoint" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "client_id" UUID,
    "failing_since" TIMESTAMPTZ(3),
    "disabled_at" TIMESTAMPTZ(3),
    "disabled_reason" TEXT,

    CONSTRAINT "onerecord_subscription_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "onerecord_partner" (
    "organization" TEXT NOT NULL,
    "server_url" TEXT NOT NULL,
    "client_id" UUID,
    "propose_subscriptions" BOOLEAN NOT NULL DEFAULT false,
    "announce_objects" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "onerecord_partner_pkey" PRIMARY KEY ("organization")
);

-- CreateTable
CREATE TABLE "onerecord_proposal" (
    "id" UUID NOT NULL,
    "partner" TEXT NOT NULL,
    "topic_type" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'PENDING',
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease_until" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "subscription_id" UUID,

    CONSTRAINT "onerecord_proposal_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "onerecord_subscription_wish" (
    "id" UUID NOT NULL,
    "topic_type" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "event_types" TEXT[],
    "send_body" BOOLEAN NOT NULL DEFAULT false,
    "description" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "onerecord_subscription_wish_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "onerecord_notification_received" (
    "id" UUID NOT NULL,
    "sender" TEXT NOT NULL,
    "notification_id" TEXT,
    "event_type" TEXT NOT NULL,
    "logistics_object" TEXT,
    "body" JSONB NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "onerecord_notification_received_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "onerecord_access_delegation" (
    "id" UUID NOT NULL,
    "status" TEXT NOT NULL,
    "requested_by" TEXT NOT NULL,
    "requested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "decided_at" TIMESTAMPTZ(3),
    "decided_by" TEXT,
    "reason" TEXT,
    "error_status" INTEGER,
    "delegation" JSONB NOT NULL,
    "objects" TEXT[],
    "organizations" TEXT[],
    "permissions" TEXT[],
    "expires_at" TIMESTAMPTZ(3),
    "notify_status_change" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "onerecord_access_delegation_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "onerecord_subscription_awb_idx" ON "onerecord_subscription"("awb");

-- CreateIndex
CREATE INDEX "onerecord_subscription_topic_type_topic_idx" ON "onerecord_subscription"("topic_type", "topic");

-- CreateIndex
CREATE INDEX "onerecord_subscription_subscriber_idx" ON "onerecord_subscription"("subscriber");

-- CreateIndex
CREATE INDEX "onerecord_partner_client_id_idx" ON "onerecord_partner"("client_id");

-- CreateIndex
CREATE INDEX "onerecord_proposal_status_next_attempt_at_idx" ON "onerecord_proposal"("status", "next_attempt_at");

-- CreateIndex
CREATE UNIQUE INDEX "onerecord_proposal_partner_topic_type_topic_key" ON "onerecord_proposal"("partner", "topic_type", "topic");

-- CreateIndex
CREATE UNIQUE INDEX "onerecord_subscription_wish_topic_type_topic_key" ON "onerecord_subscription_wish"("topic_type", "topic");

-- CreateIndex
CREATE INDEX "onerecord_notification_received_received_at_idx" ON "onerecord_notification_received"("received_at");

-- CreateIndex
CREATE UNIQUE INDEX "onerecord_notification_received_sender_notification_id_key" ON "onerecord_notification_received"("sender", "notification_id");

-- CreateIndex
CREATE INDEX "onerecord_access_delegation_requested_by_idx" ON "onerecord_access_delegation"("requested_by");

-- CreateIndex
CREATE INDEX "delivery_onerecord_subscription_id_created_at_idx" ON "delivery"("onerecord_subscription_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "delivery_event_id_onerecord_subscription_id_key" ON "delivery"("event_id", "onerecord_subscription_id");

-- CreateIndex
CREATE INDEX "logistics_object_grant_delegation_id_idx" ON "logistics_object_grant"("delegation_id");

-- AddForeignKey
ALTER TABLE "delivery" ADD CONSTRAINT "delivery_onerecord_subscription_id_fkey" FOREIGN KEY ("onerecord_subscription_id") REFERENCES "onerecord_subscription"("id") ON DELETE SET NULL ON UPDATE CASCADE;
