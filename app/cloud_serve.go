package app

import (
	"context"
	"os"

	"jobdesk/engine/blob"
	"jobdesk/engine/functions"
	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/cloudjobs"
	"jobdesk/sync/cloudworker"
	"jobdesk/sync/s3blob"
)

// ServeStores is what `jobdesk serve` needs to stand in for the cloud when its data folder's
// cloud.json (or the environment) names a bucket: the blob store of its workflows (the data
// folder's files, and s3:// through the SDK's settings — AWS_ENDPOINT_URL_S3 for a local S3
// server), the bucket names an ItemReader or ResultWriter may give without s3:// (flow.Options
// .Blobs and .Buckets), and the Lambda functions reading and writing that bucket exactly as the
// Lambda worker does (results under s3://BUCKET/PREFIX/results/). With no bucket it returns
// nils: serve keeps the device's own stores and functions.
func ServeStores(ctx context.Context, dataDir string) (blobs *blob.Mux, buckets []string, fns *functions.Registry, err error) {
	cfg, err := cloudconfig.Load(dataDir, os.Getenv, nil)
	if err != nil || cfg.Bucket == "" {
		return nil, nil, nil, err
	}
	awsCfg, err := cfg.AWS(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	s3 := s3blob.New(s3blob.NewClient(awsCfg, cfg.PathStyle(awsCfg, nil)), s3blob.Options{})
	blobs = blob.NewMux(blob.Local{Root: dataDir})
	blobs.Handle("s3", s3)
	return blobs, []string{cfg.Bucket}, cloudworker.StandInRegistry(blobs, cloudjobs.Results(cfg), nil), nil
}
