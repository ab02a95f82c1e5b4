package cloudstatus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"jobdesk/engine/job"
)

// modelAvailability is Bedrock's GetFoundationModelAvailability answer.
type modelAvailability struct {
	AuthorizationStatus     string `json:"authorizationStatus"`     // AUTHORIZED | NOT_AUTHORIZED
	EntitlementAvailability string `json:"entitlementAvailability"` // AVAILABLE | NOT_AVAILABLE
	RegionAvailability      string `json:"regionAvailability"`      // AVAILABLE | NOT_AVAILABLE
	AgreementAvailability   struct {
		Status       string `json:"status"`
		ErrorMessage string `json:"errorMessage"`
	} `json:"agreementAvailability"`
}

// bedrockEndpoint is Bedrock's control plane in region: AWS_ENDPOINT_URL_BEDROCK (the SDK's
// setting for it), else AWS's.
func bedrockEndpoint(region string) string {
	if e := os.Getenv("AWS_ENDPOINT_URL_BEDROCK"); e != "" {
		return strings.TrimSuffix(e, "/")
	}
	return "https://bedrock." + region + ".amazonaws.com"
}

// checkModel asks Bedrock whether model may be invoked in region by this account
// (GET /foundation-model-availability/MODEL, signed with SigV4 for "bedrock"). A service error
// comes back as it is; a model that answers but is not enabled is a coded E007 saying what to
// do. The desktop needs bedrock:GetFoundationModelAvailability (the template grants it).
func checkModel(ctx context.Context, cfg aws.Config, client aws.HTTPClient, region, model string) error {
	u := bedrockEndpoint(region) + "/foundation-model-availability/" + strings.ReplaceAll(url.PathEscape(model), ":", "%3A")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return err
	}
	empty := sha256.Sum256(nil)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(empty[:]), "bedrock", region, time.Now()); err != nil {
		return err
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != http.StatusOK {
		var e struct {
			Message string `json:"message"`
		}
		json.Unmarshal(body, &e)
		kind := res.Header.Get("X-Amzn-Errortype")
		kind, _, _ = strings.Cut(kind, ":")
		return job.Errorf(job.E007, "Bedrock answered %d %s for model %s in %s: %s", res.StatusCode, kind, model, region, e.Message).
			WithJa(fmt.Sprintf("Bedrock がモデル %s（%s）について %d %s を返しました。", model, region, res.StatusCode, kind))
	}
	var a modelAvailability
	if err := json.Unmarshal(body, &a); err != nil {
		return job.Errorf(job.E007, "Bedrock's answer about model %s is not JSON: %v", model, err).
			WithJa(fmt.Sprintf("モデル %s についての Bedrock の応答を読めません。", model))
	}
	switch {
	case a.RegionAvailability != "" && a.RegionAvailability != "AVAILABLE":
		return job.Errorf(job.E007, "Bedrock model %s is not offered in %s: choose a region that offers it (the stack's BedrockRegion)", model, region).
			WithJa(fmt.Sprintf("Bedrock のモデル %s は %s では提供されていません。提供しているリージョンをスタックの BedrockRegion に指定してください。", model, region))
	case a.AuthorizationStatus != "AUTHORIZED" || a.EntitlementAvailability != "AVAILABLE":
		return job.Errorf(job.E007, "Bedrock model %s is not enabled for this account in %s: an administrator requests model access in the Bedrock console of that region", model, region).
			WithJa(fmt.Sprintf("Bedrock のモデル %s はこのアカウントの %s で有効になっていません。管理者がそのリージョンの Bedrock コンソールでモデルアクセスを申請してください。", model, region))
	case a.AgreementAvailability.Status != "" && a.AgreementAvailability.Status != "AVAILABLE":
		return job.Errorf(job.E007, "Bedrock model %s in %s: its agreement is %s %s", model, region, a.AgreementAvailability.Status, a.AgreementAvailability.ErrorMessage).
			WithJa(fmt.Sprintf("Bedrock のモデル %s（%s）の利用契約が %s です。", model, region, a.AgreementAvailability.Status))
	}
	return nil
}
