// The bench's controller-runtime peer: the Uuid operator written the ordinary way on controller-runtime (a typed
// Uuid, one manager per kubeconfig context, 16 concurrent reconciles each, controller-runtime defaults otherwise:
// its cache, its priority queue, its rate limiter).
//
// Reconcile: read the object from the manager's cache; when status.uuid is empty, send one JSON merge patch carrying
// metadata.resourceVersion and status {uuid, state: Ok, message}, to /status when the CRD has the status subresource,
// else to the object itself (the seed article's CRD). A 409 requeues the object after 50 ms; another error is
// returned (controller-runtime's rate-limited retry). A UUID once written is never changed.
//
// Usage: uuid_peer_controller_runtime [--kubeconfig FILE] [--contexts a,b] [--namespace NS]
//
//	[--status-subresource true|false] [--concurrency N] [--group G] [--version V] [--kind K]
//
// Without --contexts every context of the kubeconfig runs; without --namespace all namespaces are watched.
// Prints `synced <context>` on stderr once a context's first list is in the cache; exits on SIGTERM or SIGINT.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const message = "UUID assigned by the controller-runtime peer"

// UuidStatus is what the operator writes.
type UuidStatus struct {
	UUID    string `json:"uuid,omitempty"`
	State   string `json:"state,omitempty"`
	Message string `json:"message,omitempty"`
}

// Uuid is the demo.operator Uuid (both CRD shapes: neither has a spec the operator reads).
type Uuid struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            UuidStatus `json:"status,omitempty"`
}

// UuidList is a list of Uuids.
type UuidList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Uuid `json:"items"`
}

// DeepCopyObject is what controller-gen would generate.
func (in *Uuid) DeepCopyObject() runtime.Object {
	out := new(Uuid)
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

// DeepCopyObject is what controller-gen would generate.
func (in *UuidList) DeepCopyObject() runtime.Object {
	out := new(UuidList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Uuid, len(in.Items))
		for i := range in.Items {
			out.Items[i] = *in.Items[i].DeepCopyObject().(*Uuid)
		}
	}
	return out
}

type options struct {
	kubeconfig        string
	contexts          []string
	namespace         string
	statusSubresource bool
	concurrency       int
	gv                schema.GroupVersion
	kind              string
}

type reconciler struct {
	client            client.Client
	statusSubresource bool
}

func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var u Uuid
	if err := r.client.Get(ctx, req.NamespacedName, &u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if u.Status.UUID != "" {
		return ctrl.Result{}, nil
	}
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": u.ResourceVersion},
		"status":   UuidStatus{UUID: newUUID(), State: "Ok", Message: message},
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	patch := client.RawPatch(types.MergePatchType, body)
	if r.statusSubresource {
		err = r.client.Status().Patch(ctx, &u, patch)
	} else {
		err = r.client.Patch(ctx, &u, patch)
	}
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: 50 * time.Millisecond}, nil
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "patching the Uuid %s failed: %v\n", req.NamespacedName, err)
	}
	return ctrl.Result{}, err
}

// syncReporter prints `synced <context>` once the Uuid informer (shared with the controller) has listed.
type syncReporter struct {
	cache   cache.Cache
	context string
}

func (s syncReporter) Start(ctx context.Context) error {
	if _, err := s.cache.GetInformer(ctx, &Uuid{}, cache.BlockUntilSynced(true)); err != nil {
		return fmt.Errorf("context %s: the Uuid informer did not sync: %w", s.context, err)
	}
	fmt.Fprintf(os.Stderr, "synced %s\n", s.context)
	return nil
}

func runContext(ctx context.Context, name string, o options) error {
	loading := &clientcmd.ClientConfigLoadingRules{ExplicitPath: o.kubeconfig}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, &clientcmd.ConfigOverrides{CurrentContext: name}).ClientConfig()
	if err != nil {
		return fmt.Errorf("context %s: kubeconfig is unusable: %w", name, err)
	}
	// What ctrl.GetConfig does for every controller-runtime user: no client-side rate limit (QPS -1), the
	// apiserver's priority and fairness decides.
	if cfg.QPS == 0 {
		cfg.QPS = -1
	}
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(o.gv.WithKind(o.kind), &Uuid{})
	scheme.AddKnownTypeWithName(o.gv.WithKind(o.kind+"List"), &UuidList{})
	metav1.AddToGroupVersion(scheme, o.gv)
	cacheOptions := cache.Options{}
	if o.namespace != "" {
		cacheOptions.DefaultNamespaces = map[string]cache.Config{o.namespace: {}}
	}
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                 scheme,
		Cache:                  cacheOptions,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return fmt.Errorf("context %s: no manager: %w", name, err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		For(&Uuid{}).
		Named("uuid-" + strings.ToLower(name)).
		WithOptions(controller.Options{MaxConcurrentReconciles: o.concurrency, SkipNameValidation: ptr(true)}).
		Complete(&reconciler{client: mgr.GetClient(), statusSubresource: o.statusSubresource})
	if err != nil {
		return fmt.Errorf("context %s: no controller: %w", name, err)
	}
	if err := mgr.Add(syncReporter{cache: mgr.GetCache(), context: name}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

func ptr[T any](v T) *T { return &v }

func parse() (options, error) {
	var o options
	var contexts, status, group, version string
	fs := flag.NewFlagSet("uuid_peer_controller_runtime", flag.ContinueOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "clusters/local.yaml", "kubeconfig file")
	fs.StringVar(&contexts, "contexts", "", "comma-separated contexts (default: all)")
	fs.StringVar(&o.namespace, "namespace", "", "namespace to watch (default: all)")
	fs.StringVar(&status, "status-subresource", "true", "true or false")
	fs.IntVar(&o.concurrency, "concurrency", 16, "concurrent reconciles per context")
	fs.StringVar(&group, "group", "demo.operator", "API group")
	fs.StringVar(&version, "version", "v1", "API version")
	fs.StringVar(&o.kind, "kind", "Uuid", "kind")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return o, err
	}
	switch status {
	case "true":
		o.statusSubresource = true
	case "false":
	default:
		return o, fmt.Errorf("--status-subresource must be true or false, got %q", status)
	}
	if o.concurrency < 1 {
		return o, fmt.Errorf("--concurrency must be a positive integer, got %d", o.concurrency)
	}
	for _, c := range strings.Split(contexts, ",") {
		if c != "" {
			o.contexts = append(o.contexts, c)
		}
	}
	o.gv = schema.GroupVersion{Group: group, Version: version}
	return o, nil
}

func main() {
	o, err := parse()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctrl.SetLogger(logr.Discard())
	raw, err := clientcmd.LoadFromFile(o.kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot read kubeconfig %s: %v\n", o.kubeconfig, err)
		os.Exit(2)
	}
	known := make([]string, 0, len(raw.Contexts))
	for name := range raw.Contexts {
		known = append(known, name)
	}
	sort.Strings(known)
	names := o.contexts
	if len(names) == 0 {
		names = known
	}
	for _, n := range names {
		if _, ok := raw.Contexts[n]; !ok {
			fmt.Fprintf(os.Stderr, "context %q is not in kubeconfig %s; valid: %s\n", n, o.kubeconfig, strings.Join(known, ", "))
			os.Exit(2)
		}
	}
	if len(names) == 0 {
		fmt.Fprintf(os.Stderr, "kubeconfig %s has no contexts\n", o.kubeconfig)
		os.Exit(2)
	}
	ctx := ctrl.SetupSignalHandler()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := runContext(ctx, n, o); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
