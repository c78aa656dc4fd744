package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
)

// crds creates (or updates in place) every CustomResourceDefinition found in the YAML
// files (multi-document; other kinds are an error) and waits until each one is Established
// and its names accepted, so that its resources can be used at once.
func crds(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("want KUBECONFIG FILE...")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", args[0])
	if err != nil {
		return err
	}
	client, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var names []string
	for _, file := range args[1:] {
		docs, err := readCRDs(file)
		if err != nil {
			return err
		}
		for _, crd := range docs {
			if err := apply(ctx, client, crd); err != nil {
				return fmt.Errorf("%s: %s: %w", file, crd.Name, err)
			}
			names = append(names, crd.Name)
		}
	}
	for _, name := range names {
		if err := waitEstablished(ctx, client, name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Printf("established %s\n", name)
	}
	return nil
}

func readCRDs(file string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*apiextensionsv1.CustomResourceDefinition
	for {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := dec.Decode(crd); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if crd.Kind == "" && crd.Name == "" {
			continue // an empty document
		}
		if crd.APIVersion != "apiextensions.k8s.io/v1" || crd.Kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("%s: %s %s is not an apiextensions.k8s.io/v1 CustomResourceDefinition",
				file, crd.APIVersion, crd.Kind)
		}
		out = append(out, crd)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no CustomResourceDefinition", file)
	}
	return out, nil
}

func apply(ctx context.Context, client apiextensions.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	api := client.ApiextensionsV1().CustomResourceDefinitions()
	_, err := api.Create(ctx, crd, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	current, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	crd.ResourceVersion = current.ResourceVersion
	_, err = api.Update(ctx, crd, metav1.UpdateOptions{})
	return err
}

func waitEstablished(ctx context.Context, client apiextensions.Interface, name string) error {
	api := client.ApiextensionsV1().CustomResourceDefinitions()
	return wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		crd, err := api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		established, accepted := false, false
		for _, c := range crd.Status.Conditions {
			switch {
			case c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue:
				established = true
			case c.Type == apiextensionsv1.NamesAccepted && c.Status == apiextensionsv1.ConditionFalse:
				return false, fmt.Errorf("names not accepted: %s", c.Message)
			case c.Type == apiextensionsv1.NamesAccepted && c.Status == apiextensionsv1.ConditionTrue:
				accepted = true
			}
		}
		return established && accepted, nil
	})
}
