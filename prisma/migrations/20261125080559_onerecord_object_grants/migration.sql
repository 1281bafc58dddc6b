-- CreateTable
CREATE TABLE "logistics_object_grant" (
    "object_id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "granted_by" TEXT NOT NULL,
    "granted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "logistics_object_grant_pkey" PRIMARY KEY ("object_id","organization_id")
);
